//! A JSON value that keeps object keys in the order the file wrote them, so a
//! merge into a person's settings file does not reorder what it did not touch.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// A JSON value whose objects keep their key order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, exactly as parsed.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, in file order. A repeated key keeps its first place and its last value.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// How the value is described in messages: `an array`, `a string`, …
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(_) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

/// The value under `key`, inserting `default()` at the end when absent.
pub fn entry<'a>(
    object: &'a mut Vec<(String, Json)>,
    key: &str,
    default: impl FnOnce() -> Json,
) -> &'a mut Json {
    let index = match object.iter().position(|(k, _)| k == key) {
        Some(i) => i,
        None => {
            object.push((key.to_string(), default()));
            object.len() - 1
        }
    };
    &mut object[index].1
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(v)
            .map(Json::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut object: Vec<(String, Json)> = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Json>()? {
            match object.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => object.push((key, value)),
            }
        }
        Ok(Json::Object(object))
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Number(n) => n.serialize(serializer),
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_survives_a_round_trip() {
        let text = r#"{"z": 1, "a": {"y": [true, null, 1.5], "b": "x"}, "m": -3}"#;
        let value: Json = serde_json::from_str(text).unwrap();
        assert_eq!(
            serde_json::to_string(&value).unwrap(),
            r#"{"z":1,"a":{"y":[true,null,1.5],"b":"x"},"m":-3}"#
        );
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_last_value() {
        let value: Json = serde_json::from_str(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        assert_eq!(serde_json::to_string(&value).unwrap(), r#"{"a":3,"b":2}"#);
    }

    #[test]
    fn entry_appends_missing_keys() {
        let mut object = vec![("x".to_string(), Json::Null)];
        *entry(&mut object, "y", || Json::Bool(false)) = Json::Bool(true);
        assert!(matches!(
            entry(&mut object, "x", || Json::Bool(false)),
            Json::Null
        ));
        assert_eq!(object.len(), 2);
        assert_eq!(object[1], ("y".to_string(), Json::Bool(true)));
    }
}
