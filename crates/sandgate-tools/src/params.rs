//! Reading tool parameters with errors that name the tool and the parameter.

use serde_json::{Map, Value};

use crate::error::ToolError;

/// The parameters of one call, with the tool name for error messages.
pub struct Params<'a> {
    tool: &'a str,
    map: Map<String, Value>,
}

impl<'a> Params<'a> {
    /// Check that `params` is an object (or null) and that it has no parameter
    /// outside `known`, so a misspelt option is an error rather than ignored.
    pub fn new(tool: &'a str, params: &Value, known: &[&str]) -> Result<Self, ToolError> {
        let map = match params {
            Value::Null => Map::new(),
            Value::Object(m) => m.clone(),
            other => {
                return Err(ToolError::invalid(format!(
                    "`{tool}` expects its arguments as an object, found {}",
                    json_type(other)
                )))
            }
        };
        if let Some(unknown) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(ToolError::invalid(format!(
                "`{tool}` has no parameter `{unknown}`; it takes {}",
                known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(Params { tool, map })
    }

    fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    fn wrong(&self, name: &str, expected: &str, found: &Value) -> ToolError {
        ToolError::invalid(format!(
            "`{}` expects `{name}` to be {expected}, found {}",
            self.tool,
            json_type(found)
        ))
    }

    /// An optional string.
    pub fn opt_str(&self, name: &str) -> Result<Option<&str>, ToolError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong(name, "a string", other)),
        }
    }

    /// A required string.
    pub fn str(&self, name: &str) -> Result<&str, ToolError> {
        self.opt_str(name)?.ok_or_else(|| {
            ToolError::invalid(format!("`{}` needs the parameter `{name}`", self.tool))
        })
    }

    /// An optional boolean.
    pub fn opt_bool(&self, name: &str) -> Result<Option<bool>, ToolError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong(name, "a boolean", other)),
        }
    }

    /// An optional whole number within `min..=max`.
    pub fn opt_u64(&self, name: &str, min: u64, max: u64) -> Result<Option<u64>, ToolError> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let n = match v {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                    .map(|f| f as u64)
            }),
            _ => None,
        };
        match n {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            Some(n) => Err(ToolError::invalid(format!(
                "`{}` expects `{name}` between {min} and {max}, found {n}",
                self.tool
            ))),
            None => Err(self.wrong(name, "a whole number", v)),
        }
    }
}

pub use sandgate_policy::request::json_type;
