//! Seatbelt (macOS `sandbox-exec`): the plan as an SBPL profile.
//!
//! The profile text is fixed for a given shape of plan and refers to paths
//! only through parameters (`(param "WORKDIR")`); the paths themselves are
//! passed as `-D NAME=VALUE`, so no path can change the profile's meaning.

use crate::plan::Plan;

/// `sandbox-exec`, always by absolute path.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The profile and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The SBPL text.
    pub text: String,
    /// `(name, value)` pairs passed with `-D`.
    pub params: Vec<(String, String)>,
}

/// Generates the profile: reads allowed except the denied directories,
/// writes denied except the workdir, the temp dir (with `allow_tmp`),
/// `/dev/null` and `/dev/tty`; the network off unless allowed.
pub fn profile(plan: &Plan) -> Profile {
    let mut params = Vec::new();
    let mut writable = Vec::new();
    for (i, dir) in plan.writable.iter().enumerate() {
        let name = if i == 0 {
            "WORKDIR".to_string()
        } else {
            format!("WRITABLE_{i}")
        };
        writable.push(format!("    (subpath (param \"{name}\"))"));
        params.push((name, dir.display().to_string()));
    }
    let mut denied = Vec::new();
    for (i, dir) in plan.denied.iter().enumerate() {
        let name = format!("DENY_{i}");
        denied.push(format!("    (subpath (param \"{name}\"))"));
        params.push((name, dir.path.display().to_string()));
    }

    let mut text = String::from("(version 1)\n(allow default)\n");
    text.push_str("(deny file-write*)\n(allow file-write*\n");
    for line in &writable {
        text.push_str(line);
        text.push('\n');
    }
    text.push_str("    (literal \"/dev/null\")\n    (literal \"/dev/tty\"))\n");
    if !denied.is_empty() {
        text.push_str("(deny file-read* file-write*\n");
        text.push_str(&denied.join("\n"));
        text.push_str(")\n");
    }
    if !plan.network {
        text.push_str(
            "(deny network*)\n(allow network* (remote unix-socket) (local unix-socket))\n",
        );
    }
    Profile { text, params }
}

/// The full argv: `sandbox-exec -p PROFILE -D K=V … /bin/sh -c COMMAND`.
pub fn argv(profile: &Profile, command: &str) -> Vec<String> {
    let mut argv = vec![
        SANDBOX_EXEC.to_string(),
        "-p".to_string(),
        profile.text.clone(),
    ];
    for (name, value) in &profile.params {
        argv.push("-D".to_string());
        argv.push(format!("{name}={value}"));
    }
    argv.extend(["/bin/sh".to_string(), "-c".to_string(), command.to_string()]);
    argv
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use sandgate_policy::config::IsolationConfig;

    use super::*;
    use crate::plan::{build, PlanInput};

    fn plan(config: IsolationConfig, deny: &[&str]) -> Plan {
        let deny: Vec<String> = deny.iter().map(|s| s.to_string()).collect();
        build(&PlanInput {
            config: &config,
            deny_patterns: &deny,
            cwd: Path::new("/Users/ann/my \"proj\")"),
            home: Path::new("/Users/ann"),
            temp_dir: Path::new("/private/tmp"),
            other_homes: &[],
        })
        .unwrap()
    }

    #[test]
    fn profile_default() {
        let p = profile(&plan(IsolationConfig::default(), &[]));
        insta::assert_snapshot!(p.text);
        insta::assert_debug_snapshot!(p.params);
    }

    #[test]
    fn profile_with_tmp_network_and_deny_dirs() {
        let config = IsolationConfig {
            allow_tmp: Some(true),
            network: Some(true),
            ..IsolationConfig::default()
        };
        let p = profile(&plan(config, &["/Volumes/secret/**"]));
        insta::assert_snapshot!(p.text);
        insta::assert_debug_snapshot!(argv(&p, "echo \"$HOME\"; ls"));
    }

    #[test]
    fn paths_never_enter_the_profile_text() {
        let p = profile(&plan(
            IsolationConfig::default(),
            &["/x\")(allow default)/**"],
        ));
        assert!(!p.text.contains("/Users"));
        assert!(!p.text.contains("/x"));
        assert!(p.params.iter().any(|(_, v)| v == "/x\")(allow default)"));
    }
}
