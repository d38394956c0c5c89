//! A workspace's `.sandgate/sandbox.json` is the workspace's to write:
//! reading it never panics (bad JSON is an error naming where), and settings
//! that parse build a run plan that answers for any path without panicking.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sandgate_confine::{RunPlan, RunPlanExt, RunPlanInputs, SandboxFile, SettingsError};

fuzz_target!(|data: &[u8]| {
    let t = sandgate_fuzz::tree();
    let file = SandboxFile::of(&t.work);
    std::fs::create_dir_all(file.path().parent().expect("a parent")).expect("the directory");
    std::fs::write(file.path(), data).expect("write sandbox.json");
    match file.load_or_create() {
        Ok(settings) => {
            let plan = RunPlan::build(&RunPlanInputs {
                workspaces: vec![t.work.clone()],
                home: t.home.clone(),
                tmpdir: None,
                settings,
                policy_cache: None,
                credentials: vec![t.home.join(".netrc"), t.home.join(".kube")],
            });
            for p in [
                t.work.join("a"),
                t.home.join(".ssh/id_rsa"),
                t.home.join(".sandgate/permissions.yaml"),
                Path::new("/etc/passwd").to_path_buf(),
            ] {
                let _ = plan.is_allowed(&p, &[]);
                let _ = plan.is_denied(&p, &[]);
            }
        }
        Err(e) => {
            assert!(!e.to_string().is_empty());
            if let SettingsError::Parse { line, .. } = e {
                assert!(line <= data.split(|&b| b == b'\n').count() + 1);
            }
        }
    }
});
