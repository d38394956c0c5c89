//! The custom wrapper: a user-supplied template turned into an argv.
//!
//! The template is split on whitespace first; then, in each token,
//! `{workdir}` is replaced by the workdir and `{cmd}` by the whole command.
//! Substituted text is never scanned again and never passes through a shell,
//! so neither the workdir nor the command can inject wrapper arguments.

use serde::Serialize;

/// A template that passed validation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Template {
    tokens: Vec<String>,
}

/// Why a template cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// No template, or only whitespace.
    #[error("isolation mode `custom` needs a non-empty `template`")]
    Empty,
    /// The template never mentions the command.
    #[error("isolation template `{0}` has no `{{cmd}}` placeholder")]
    NoCmd(String),
}

impl Template {
    /// Tokenizes and validates a template.
    pub fn parse(template: &str) -> Result<Template, TemplateError> {
        let tokens: Vec<String> = template.split_whitespace().map(String::from).collect();
        if tokens.is_empty() {
            return Err(TemplateError::Empty);
        }
        if !tokens.iter().any(|t| t.contains("{cmd}")) {
            return Err(TemplateError::NoCmd(template.trim().to_string()));
        }
        Ok(Template { tokens })
    }

    /// The argv for one command; `argv[0]` is the wrapper program.
    pub fn argv(&self, workdir: &str, command: &str) -> Vec<String> {
        self.tokens
            .iter()
            .map(|t| substitute(t, workdir, command))
            .collect()
    }
}

/// Replaces the placeholders in one pass, so substituted text is never rescanned.
fn substitute(token: &str, workdir: &str, command: &str) -> String {
    let mut out = String::with_capacity(token.len());
    let mut rest = token;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        if let Some(after) = tail.strip_prefix("{workdir}") {
            out.push_str(workdir);
            rest = after;
        } else if let Some(after) = tail.strip_prefix("{cmd}") {
            out.push_str(command);
            rest = after;
        } else {
            out.push('{');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_split_first_then_placeholders_fill_in() {
        let t = Template::parse(
            "bwrap --ro-bind / /\n  --bind {workdir} {workdir} --chdir={workdir}/x /bin/sh -c {cmd}",
        )
        .unwrap();
        let argv = t.argv("/home/a b/{cmd}", "echo 'x y'; echo $HOME {workdir}");
        assert_eq!(
            argv,
            [
                "bwrap",
                "--ro-bind",
                "/",
                "/",
                "--bind",
                "/home/a b/{cmd}",
                "/home/a b/{cmd}",
                "--chdir=/home/a b/{cmd}/x",
                "/bin/sh",
                "-c",
                "echo 'x y'; echo $HOME {workdir}",
            ]
        );
    }

    #[test]
    fn braces_that_are_no_placeholder_stay() {
        let t = Template::parse("w {x} {{cmd}} {cmd").unwrap();
        assert_eq!(t.argv("/w", "C"), ["w", "{x}", "{C}", "{cmd"]);
    }

    #[test]
    fn invalid_templates() {
        assert_eq!(Template::parse("  \n\t "), Err(TemplateError::Empty));
        let err = Template::parse(" bwrap --bind {workdir} {workdir} sh ").unwrap_err();
        assert_eq!(
            err.to_string(),
            "isolation template `bwrap --bind {workdir} {workdir} sh` has no `{cmd}` placeholder"
        );
    }
}
