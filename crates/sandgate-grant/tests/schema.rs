//! `schema/loop.schema.json` and the parser agree on what a loop config is.
//!
//! Each case is a JSON document (JSON is YAML, so the parser reads it as is).
//! The parser must accept exactly the valid ones; when Python's `jsonschema`
//! is installed (`.ci/run` installs `python3-jsonschema`), the schema must too.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use wait::{Bounded, DEADLINE};

use sandgate_grant::parse_str;

#[path = "../../../tests/support/wait.rs"]
mod wait;

const CASES: &[(&str, bool)] = &[
    (
        r#"{"providers": {"providers": [{"command": "claude"}]}}"#,
        true,
    ),
    (
        r#"{"providers": {"providers": [{"name": "main", "command": "codex"}]}}"#,
        true,
    ),
    (
        r#"{"validations": [{"name": "t", "detector": {"script": {"command": "./s.sh", "args": ["a b", "$x"]}}}]}"#,
        true,
    ),
    (
        r#"{"validations": [{"detector": {"manual": "look"}}]}"#,
        true,
    ),
    (
        r#"{"skills": {"acquisition_order": ["installed", "marketplace"]}}"#,
        true,
    ),
    (
        r#"{"constraints": {"human_checkpoint": ["before publishing"]}}"#,
        true,
    ),
    (
        r#"{"providers": {}, "validations": [], "skills": {}, "constraints": {}}"#,
        true,
    ),
    (r#"{"provider": {}}"#, false),
    (
        r#"{"providers": {"providers": [{"command": "claude", "model": "x"}]}}"#,
        false,
    ),
    (
        r#"{"providers": {"providers": [{"name": "no command"}]}}"#,
        false,
    ),
    (
        r#"{"providers": {"providers": [{"command": "claude -p"}]}}"#,
        false,
    ),
    (r#"{"providers": {"providers": [{"command": ""}]}}"#, false),
    (
        r#"{"providers": {"providers": [{"command": "a;b"}]}}"#,
        false,
    ),
    (
        r#"{"validations": [{"detector": {"script": {"command": "x", "arg": []}}}]}"#,
        false,
    ),
    (
        r#"{"validations": [{"detector": {"shell": "make test"}}]}"#,
        false,
    ),
    (
        r#"{"validations": [{"detector": {"manual": "x", "script": {"command": "y"}}}]}"#,
        false,
    ),
    (r#"{"validations": [{"name": "no detector"}]}"#, false),
    (r#"{"skills": {"acquisition_order": ["market"]}}"#, false),
    (r#"{"constraints": {"human_checkpoints": []}}"#, false),
];

#[test]
fn the_parser_accepts_exactly_the_valid_cases() {
    for (text, valid) in CASES {
        let parsed = parse_str(text, Path::new("loop.json"));
        assert_eq!(parsed.is_ok(), *valid, "{text}: {:?}", parsed.err());
    }
}

fn schema_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema/loop.schema.json")
}

const VALIDATE: &str = "\
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
for line in sys.stdin:
    ok = jsonschema.Draft202012Validator(schema).is_valid(json.loads(line))
    print('valid' if ok else 'invalid')
";

#[test]
fn the_schema_accepts_exactly_the_valid_cases() {
    let probe = Command::new("python3")
        .args(["-c", "import jsonschema"])
        .output_within(DEADLINE);
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipping: python3 with jsonschema is not installed (apt-get install python3-jsonschema)");
        return;
    }
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(VALIDATE)
        .arg(schema_path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for (text, _) in CASES {
        writeln!(stdin, "{text}").unwrap();
    }
    drop(stdin);
    let out = wait::finish(child, 60, "the schema validator");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verdicts: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(verdicts.len(), CASES.len());
    for ((text, valid), verdict) in CASES.iter().zip(&verdicts) {
        assert_eq!(
            verdict == "valid",
            *valid,
            "schema says {verdict} for {text}"
        );
    }
}
