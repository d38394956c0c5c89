//! The shell-aware command gate, case by case: policy, command → verdict and
//! the part that decided it (a text the reason must contain).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod shell_common;

use sandgate_policy::{ToolCall, Verdict};
use shell_common::Home;

use Verdict::{Allow, Ask, Deny};

/// Only `echo` is allowed.
const ECHO: &str = r#"
permissions:
  commands:
    allow: ["^echo( |$)"]
"#;

/// Git is allowed, `git clean` denied.
const GIT: &str = r#"
permissions:
  commands:
    deny: ["^git clean"]
    allow: ["^git( |$)"]
"#;

/// A rule written for one spelling: it does not see `rm -fr /`.
const NAIVE_RM: &str = r#"
permissions:
  commands:
    deny: ["^rm -rf /"]
    allow: ["^ls( |$)"]
"#;

/// A rule that means "rm of / with any flags", whatever their order or spelling.
const ANY_RM: &str = r#"
permissions:
  commands:
    deny: ['^rm\s+(-\S+\s+)*/(\s|$)']
    allow: ["^ls( |$)"]
"#;

/// A developer's policy.
const DEV: &str = r#"
permissions:
  paths:
    deny: ["/etc/**"]
    allow: ["./**", "/scratch/**"]
  commands:
    deny:
      - '^rm\s+(-\S+\s+)*(/|~/?)(\s|$)'
      - '\|\s*(ba|z|da|k)?sh\b'
      - '^git push\s+(.*\s)?--force'
      - '^curl\b'
      - '^git clean'
    allow:
      - "^git( |$)"
      - "^ls( |$)"
      - "^cat( |$)"
      - "^echo( |$)"
      - "^grep "
      - "^sed -n "
      - "^cargo (build|test|check|fmt)( |$)"
      - "^wc( |$)"
      - "^head "
      - "^cd "
      - "^mkdir -p "
      - "^true$"
      - "^find "
"#;

/// The presets' readers and build tools allowed by name, the project as a
/// path allow rule (reads only), `/etc` denied.
const TOOLS: &str = r#"
permissions:
  paths:
    deny: ["/etc/**"]
    read:
      allow: ["./**"]
  commands:
    allow:
      - '^(git|rg|diff|jq|du|find|sort|ls|cat|bash|sh|time|nohup|cargo|npm|yarn|pnpm|node|pytest|python3|pip|mypy|ruff|pylint|flake8|uv)( |$)'
"#;

/// The same rules in raw mode.
const ECHO_RAW: &str = r#"
permissions:
  commands:
    shell: false
    allow: ["^echo( |$)"]
"#;

const GIT_RAW: &str = r#"
permissions:
  commands:
    shell: false
    deny: ["^git clean"]
    allow: ["^git( |$)"]
"#;

#[rustfmt::skip]
const CASES: &[(&str, &str, Verdict, &str)] = &[
    // Lists, pipelines and every place a command can hide, with only `echo` allowed.
    (ECHO, "echo test", Allow, "`echo test` by `^echo( |$)`"),
    (ECHO, "echo test && ls", Ask, "simple command `ls`"),
    (ECHO, "echo test; ls", Ask, "simple command `ls`"),
    (ECHO, "echo test || ls", Ask, "simple command `ls`"),
    (ECHO, "echo test | ls", Ask, "simple command `ls`"),
    (ECHO, "echo test & ls", Ask, "simple command `ls`"),
    (ECHO, "echo test\nls", Ask, "simple command `ls`"),
    (ECHO, "echo test |& ls", Ask, "simple command `ls`"),
    (ECHO, "echo $(ls)", Ask, "simple command `ls`"),
    (ECHO, "echo `ls`", Ask, "simple command `ls`"),
    (ECHO, "echo \"$(ls)\"", Ask, "simple command `ls`"),
    (ECHO, "echo <(ls)", Ask, "simple command `ls`"),
    (ECHO, "echo >(ls)", Ask, "simple command `ls`"),
    (ECHO, "echo ${x:-$(ls)}", Ask, "simple command `ls`"),
    (ECHO, "echo $((1 + $(ls)))", Ask, "simple command `ls`"),
    (ECHO, "FOO=$(ls) echo hi", Ask, "simple command `ls`"),
    (ECHO, "(echo a; ls)", Ask, "simple command `ls`"),
    (ECHO, "{ echo a; ls; }", Ask, "simple command `ls`"),
    (ECHO, "if echo a; then ls; fi", Ask, "simple command `ls`"),
    (ECHO, "if echo a; then echo b; else ls; fi", Ask, "simple command `ls`"),
    (ECHO, "while echo; do ls; done", Ask, "simple command `ls`"),
    (ECHO, "until echo; do ls; done", Ask, "simple command `ls`"),
    (ECHO, "for i in $(ls); do echo $i; done", Ask, "simple command `ls`"),
    (ECHO, "case x in x) ls;; esac", Ask, "simple command `ls`"),
    (ECHO, "f() { ls; }", Ask, "simple command `ls`"),
    (ECHO, "f() { echo a; }; f", Ask, "simple command `f`"),
    (ECHO, "echo hi > $(ls)", Ask, "the redirection target `$(ls)` is an expansion"),
    (ECHO, "bash -c 'echo hi; ls'", Ask, "simple command `ls`"),
    (ECHO, "echo a `echo b` $(echo c)", Allow, "`echo a `echo b` $(echo c)`"),
    (ECHO, "echo a; echo b && echo c", Allow, "`echo a` by `^echo( |$)`"),
    (ECHO, "(echo hi)", Allow, "`echo hi`"),
    (ECHO, "{ echo hi; }", Allow, "`echo hi`"),
    (ECHO, "for i in 1 2; do echo $i; done", Allow, "`echo $i`"),
    (ECHO, "! echo hi", Allow, "`echo hi`"),
    (ECHO, "[[ -n x ]] && echo hi", Allow, "`echo hi`"),
    (ECHO, "echo $((1 + 2))", Allow, "`echo $((1 + 2))`"),
    (ECHO, "echo hi >&2", Allow, "`echo hi`"),
    (ECHO, "echo hi > /dev/null 2>/dev/stderr", Allow, "`> /dev/null`, `2>/dev/stderr`"),
    (ECHO, "echo hi >/dev/stdout", Allow, "`echo hi`"),
    (ECHO, "echo hi > out.txt", Ask, "the redirection `> out.txt` writes a path"),
    // Quoting is removed before matching.
    (ECHO, "e''cho hi", Allow, "`echo hi`"),
    (ECHO, "\\echo hi", Allow, "`echo hi`"),
    (ECHO, "\"echo\" hi", Allow, "`echo hi`"),
    (ECHO, "echo 'a; ls'", Allow, "`echo a; ls`"),
    (ECHO, "echo \"a && ls\"", Allow, "`echo a && ls`"),
    (ECHO, "echo a\\; ls", Allow, "`echo a; ls`"),
    (ECHO, "echo hi # ; ls", Allow, "`echo hi`"),
    (ECHO, "echoes", Ask, "simple command `echoes`"),
    (ECHO, "X=1", Ask, "simple command `X=1`"),
    // Wrappers: the command they run is what must be allowed.
    (ECHO, "timeout 5 echo hi", Allow, "`timeout 5 echo hi` by `^echo( |$)`"),
    (ECHO, "nohup echo hi &", Ask, "nohup.out"),
    (ECHO, "nohup echo hi > log &", Ask, "log"),
    (ECHO, "exec echo hi", Allow, "`exec echo hi`"),
    (ECHO, "xargs echo", Allow, "`xargs echo`"),
    (ECHO, "ls | xargs echo", Ask, "simple command `ls`"),
    (ECHO, "xargs ls", Ask, "simple command `xargs ls`"),
    (ECHO, "timeout 5 ls", Ask, "simple command `timeout 5 ls`"),
    (ECHO, "sudo echo hi", Ask, "simple command `sudo echo hi`"),
    (ECHO, "bash -c 'echo hi'", Allow, "runs a script"),
    (ECHO, "bash -c 'echo a && echo b'", Allow, "runs a script"),
    (ECHO, "bash -lc 'echo a && echo b'", Ask, "startup files"),
    (ECHO, "bash --login -c 'echo a'", Ask, "startup files"),
    (ECHO, "bash --rcfile x -ic 'echo a'", Ask, "startup files"),
    (ECHO, "BASH_ENV=x bash -c 'echo a'", Ask, "`BASH_ENV`"),
    // What cannot be analysed is asked about, never allowed.
    (ECHO, "eval echo hi", Ask, "`eval` runs a string built at run time"),
    (ECHO, "$E hi", Ask, "the command name `$E` is an expansion"),
    (ECHO, "${E} hi", Ask, "the command name `${E}` is an expansion"),
    (ECHO, "$(echo echo) hi", Ask, "the command name `$(echo echo)` is an expansion"),
    (ECHO, "sh -c \"$X\"", Ask, "the script of `sh -c` holds an expansion"),
    (ECHO, "echo hi | bash", Ask, "`bash` reads its commands from standard input"),
    (ECHO, "bash <<EOF\necho hi\nEOF", Ask, "`bash` reads its commands from a heredoc"),
    (ECHO, "sh <<< 'echo hi'", Ask, "`sh` reads its commands from a here-string"),
    (ECHO, "source ./env.sh", Ask, "`source` runs the commands of a file"),
    (ECHO, ". ./env.sh", Ask, "`.` runs the commands of a file"),
    (ECHO, "echo (", Ask, "parse error at 1:"),
    (ECHO, "echo 'unterminated", Ask, "parse error at 1:"),
    (ECHO, "# only a comment", Ask, "holds no simple command"),
    (ECHO, "echo > $F", Ask, "the redirection target `$F` is an expansion"),

    // Git allowed, `git clean` denied.
    (GIT, "git status", Allow, "`git status` by `^git( |$)`"),
    (GIT, "git fetch && git clean -fd", Deny, "`git clean -fd` matches the deny rule `^git clean`"),
    (GIT, "git status; git clean -fdx", Deny, "`git clean -fdx`"),
    (GIT, "git status && git  clean -f", Deny, "`git clean -f`"),
    (GIT, "git \"clean\" -fd", Deny, "`git clean -fd`"),
    (GIT, "g\\it clean -fd", Deny, "`git clean -fd`"),
    (GIT, "timeout 60 git clean -fd", Deny, "(as `git clean -fd`)"),
    (GIT, "env GIT_DIR=x git clean -fd", Deny, "(as `git clean -fd`)"),
    (GIT, "command git clean -fd", Deny, "(as `git clean -fd`)"),
    (GIT, "nice -n 10 git clean -fdx", Deny, "(as `git clean -fdx`)"),
    (GIT, "xargs git clean -fd", Deny, "(as `git clean -fd`)"),
    (GIT, "bash -c 'git clean -fd'", Deny, "`git clean -fd`"),
    (GIT, "git log $(git clean -fd)", Deny, "`git clean -fd`"),
    (GIT, "git status `git clean -fd`", Deny, "`git clean -fd`"),
    (GIT, "git push & git clean -fd", Deny, "`git clean -fd`"),
    (GIT, "git status | git clean -n", Deny, "`git clean -n`"),
    (GIT, "git status; rm -rf ~", Deny, "`rm -rf ~` writes everything below"),
    (GIT, "sh -lc \"git status; rm -rf ~\"", Deny, "holds the floor directory"),
    (GIT, "git status; rm -rf build", Ask, "simple command `rm -rf build`"),
    (GIT, "git status && echo done", Ask, "simple command `echo done`"),
    (GIT, "FOO=$(curl x) git status", Ask, "simple command `curl x`"),
    (GIT, "CI=1 git status", Allow, "`CI=1 git status` by `^git( |$)`"),
    (GIT, "PATH=/tmp/evil git status", Ask, "simple command `PATH=/tmp/evil git status`"),
    (GIT, "LD_PRELOAD=./x.so git status", Ask, "simple command `LD_PRELOAD=./x.so git status`"),
    (GIT, "sudo git status", Ask, "simple command `sudo git status`"),
    (GIT, "/tmp/x/git status", Ask, "simple command `/tmp/x/git status`"),
    (GIT, "git commit -m \"fix; rm -rf ~\"", Allow, "`git commit -m fix; rm -rf ~`"),
    (GIT, "git commit -m \"$(rm -rf ~)\"", Deny, "holds the floor directory"),
    (GIT, "git commit -m \"$(rm -rf x)\"", Ask, "simple command `rm -rf x`"),
    (GIT, "git commit -m '$(rm -rf ~)'", Allow, "`git commit -m $(rm -rf ~)`"),
    (GIT, "git diff > ../patch", Ask, "the redirection `> ../patch` writes a path"),
    (GIT, "git status 2>&1 | git log", Allow, "`git log`"),
    (GIT, "'git' status", Allow, "`git status`"),
    (GIT, "git -C sub status", Allow, "`git -C sub status`"),
    (GIT, "timeout 5 git status", Allow, "`timeout 5 git status`"),
    (GIT, "bash -c 'git status' && git log", Allow, "runs a script"),

    // The naive rule: every wrapper and hiding place, but only its own spelling.
    (NAIVE_RM, "rm -rf /", Deny, "`rm -rf /` matches the deny rule `^rm -rf /`"),
    (NAIVE_RM, "rm -fr /", Deny, "holds the floor directory"),
    (NAIVE_RM, "rm -fr /srv/data", Ask, "simple command `rm -fr /srv/data`"),
    (NAIVE_RM, "r''m -rf /", Deny, "`rm -rf /`"),
    (NAIVE_RM, "\\rm -rf /", Deny, "`rm -rf /`"),
    (NAIVE_RM, "\"rm\" -rf /", Deny, "`rm -rf /`"),
    (NAIVE_RM, "rm  -rf   /", Deny, "`rm -rf /`"),
    (NAIVE_RM, "$'rm' -rf /", Deny, "`rm -rf /`"),
    (NAIVE_RM, "$'\\x72m' -rf /", Deny, "`rm -rf /`"),
    (NAIVE_RM, "timeout 5 rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "nice rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "env X=1 rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "command rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "sudo rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "doas rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "exec rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "nohup rm -rf / &", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "xargs rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "stdbuf -oL rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "ionice -c3 rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "time rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "builtin command rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "X=1 Y=2 rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "sudo -u root env -i timeout 9 nice rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "/bin/rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "sudo >/dev/null rm -rf /", Deny, "(as `rm -rf /`)"),
    (NAIVE_RM, "bash -c 'rm -rf /'", Deny, "`rm -rf /`"),
    (NAIVE_RM, "dash -c \"sh -c 'rm -rf /'\"", Deny, "`rm -rf /`"),
    (NAIVE_RM, "zsh -ec 'ls; rm -rf /'", Deny, "`rm -rf /`"),
    (NAIVE_RM, "ksh -c 'rm -rf /'", Deny, "`rm -rf /`"),
    (NAIVE_RM, "ls $(rm -rf /)", Deny, "`rm -rf /`"),
    (NAIVE_RM, "ls `rm -rf /`", Deny, "`rm -rf /`"),
    (NAIVE_RM, "ls\nrm -rf /", Deny, "`rm -rf /`"),
    (NAIVE_RM, "cat <(rm -rf /)", Deny, "`rm -rf /`"),
    (NAIVE_RM, "ls >(rm -rf /)", Deny, "`rm -rf /`"),
    (NAIVE_RM, "ls; rm -rf /", Deny, "`rm -rf /`"),
    (NAIVE_RM, "ls && { rm -rf /; }", Deny, "`rm -rf /`"),
    (NAIVE_RM, "(rm -rf /)", Deny, "`rm -rf /`"),
    (NAIVE_RM, "if true; then rm -rf /; fi", Deny, "`rm -rf /`"),
    (NAIVE_RM, "echo ${x:-$(rm -rf /)}", Deny, "`rm -rf /`"),
    (NAIVE_RM, "X=$(rm -rf /) ls", Deny, "`rm -rf /`"),
    (NAIVE_RM, "ls > \"$(rm -rf /)\"", Deny, "`rm -rf /`"),
    (NAIVE_RM, "ls; rm -rf / ; )", Deny, "`rm -rf /`"),
    (NAIVE_RM, "eval 'rm -rf /'", Ask, "`eval` runs a string"),
    (NAIVE_RM, "ls -la", Allow, "`ls -la` by `^ls( |$)`"),

    // The rule that intends every spelling.
    (ANY_RM, "rm -rf /", Deny, "`rm -rf /`"),
    (ANY_RM, "rm -fr /", Deny, "`rm -fr /`"),
    (ANY_RM, "rm -r -f /", Deny, "`rm -r -f /`"),
    (ANY_RM, "rm --recursive --force /", Deny, "`rm --recursive --force /`"),
    (ANY_RM, "rm -Rf /", Deny, "`rm -Rf /`"),
    (ANY_RM, "sudo rm -fr /", Deny, "(as `rm -fr /`)"),
    (ANY_RM, "ls; r''m -fr /", Deny, "`rm -fr /`"),
    (ANY_RM, "rm -rf /tmp/x", Ask, "simple command `rm -rf /tmp/x`"),

    // A developer's policy: redirections are path writes.
    (DEV, "cat notes > ~/.ssh/authorized_keys", Deny, "protected by the built-in floor `~/.ssh/**`"),
    (DEV, "echo key >> ~/.ssh/config", Deny, "floor `~/.ssh/**`"),
    (DEV, "echo x > ~/.sandgate/permissions.yaml", Deny, "floor `~/.sandgate/**`"),
    (DEV, "echo x > ~/.aws/credentials", Deny, "floor `~/.aws/**`"),
    (DEV, "echo x > /etc/hosts", Deny, "the deny rule `/etc/**`"),
    (DEV, "echo x &> /etc/passwd", Deny, "`&> /etc/passwd`"),
    (DEV, "echo x &>> /etc/passwd", Deny, "`&>> /etc/passwd`"),
    (DEV, "echo x 2> /etc/log", Deny, "`2> /etc/log`"),
    (DEV, "echo x 3<> /etc/x", Deny, "`3<> /etc/x`"),
    (DEV, "echo x >| /etc/x", Deny, "`>| /etc/x`"),
    (DEV, "echo x >& /etc/x", Deny, "`>& /etc/x`"),
    (DEV, "{ echo a; } > /etc/x", Deny, "`> /etc/x`"),
    (DEV, "bash -c 'echo x > /etc/x'", Deny, "`> /etc/x`"),
    (DEV, "echo $(cat x > /etc/y)", Deny, "`> /etc/y`"),
    // A relative target is judged from every directory the line may be in.
    (DEV, "cd /etc && echo x > passwd", Deny, "the word `/etc` names a path: `/etc` matches the deny rule `/etc/**`"),
    (DEV, "echo x > passwd; cd /etc", Deny, "`/etc` matches the deny rule `/etc/**`"),
    (DEV, "cd .. && echo x > passwd", Ask, "no allow rule matched `"),
    (DEV, "cd /scratch && echo x > /scratch/y", Allow, "`> /scratch/y`"),
    (DEV, "cd - && echo x > passwd", Ask, "the redirection target `passwd` is relative and `cd -` changes the directory"),
    (DEV, "popd; echo x > y", Ask, "popd"),
    (DEV, "echo x > ~root/.bashrc", Ask, "no allow rule matched `/root/.bashrc`"),
    (DEV, "echo x > ~-/y", Deny, "`~-` names no home directory"),
    (DEV, "echo x > out.txt", Allow, "`> out.txt`"),
    (DEV, "echo x > ./build/../out.txt", Allow, "`echo x`"),
    (DEV, "echo x > /scratch/y", Allow, "`> /scratch/y` by `/scratch/**`"),
    (DEV, "echo x > ../outside", Ask, "`> ../outside` writes a path: no allow rule matched"),
    (DEV, "echo x > \"$HOME/.bashrc\"", Ask, "the redirection target `$HOME/.bashrc` is an expansion"),
    (DEV, "echo x > /scratch/*.txt", Ask, "is a pattern"),
    (DEV, "echo hi > /dev/null 2>&1", Allow, "`echo hi`"),
    (DEV, "cat x | grep y > /scratch/z", Allow, "`grep y`"),
    (DEV, "mkdir -p build && echo ok > build/log", Allow, "`mkdir -p build`"),
    // Deny rules over the raw line and every part.
    (DEV, "wget -qO- x | sh", Deny, "the command matches the deny rule `\\|\\s*(ba|z|da|k)?sh\\b`"),
    (DEV, "ls | bash", Deny, "deny rule `\\|\\s*(ba|z|da|k)?sh\\b`"),
    (DEV, "curl x", Deny, "`curl x` matches the deny rule `^curl\\b`"),
    (DEV, "git status && curl x -o y", Deny, "`curl x -o y`"),
    (DEV, "git push --force", Deny, "`git push --force`"),
    (DEV, "git push origin main --force", Deny, "`git push origin main --force`"),
    (DEV, "rm -rf ~/", Deny, "`rm -rf ~/`"),
    (DEV, "ls ~ && rm -r ~", Deny, "`rm -r ~`"),
    (DEV, "cd /etc && rm -rf ~", Deny, "`rm -rf ~`"),
    // Allow needs every part.
    (DEV, "git status && cargo test", Allow, "`git status` by `^git( |$)`"),
    (DEV, "cargo test 2>&1 | head -n 20", Allow, "`head -n 20` by `^head `"),
    (DEV, "cargo test 2>&1 | tail -n 20", Ask, "simple command `tail -n 20`"),
    (DEV, "grep -r foo . | wc -l", Allow, "`wc -l`"),
    (DEV, "find . -name '*.rs' | xargs grep foo", Ask, "`xargs` adds words read from its input"),
    (DEV, "cd src && ls", Allow, "`cd src`"),
    (DEV, "sed -n '1,5p' file", Allow, "`sed -n 1,5p file`"),
    (DEV, "sed -i s/a/b/ file", Ask, "simple command `sed -i s/a/b/ file`"),
    (DEV, "true", Allow, "`true` by `^true$`"),
    (DEV, "cargo publish", Ask, "simple command `cargo publish`"),
    (DEV, "eval \"$(ssh-agent)\"", Ask, "`eval` runs a string built at run time"),
    (DEV, "source ~/.bashrc", Ask, "`source` runs the commands of a file"),
    (DEV, "$CMD", Ask, "the command name `$CMD` is an expansion"),
    (DEV, "$(which git) status", Ask, "the command name `$(which git)` is an expansion"),
    (DEV, "\"$(echo rm)\" -rf /", Ask, "the command name `$(echo rm)` is an expansion"),
    (DEV, "bash <<'EOF'\nrm -rf /\nEOF", Ask, "`bash` reads its commands from a heredoc"),
    (DEV, "git status; )", Ask, "parse error"),
    (DEV, "env -S 'rm -rf /'", Ask, "`env -S` runs a command that cannot be analysed"),
    (DEV, "sudo -e /scratch/sudoers", Ask, "`sudo -e` runs a command that cannot be analysed"),
    (DEV, "sudo -e /etc/sudoers", Deny, "`/etc/sudoers` matches the deny rule `/etc/**`"),
    (DEV, "sudo --bogus ls", Ask, "unknown option `--bogus` of `sudo`"),

    // What the readers and build tools do through options, variables and
    // startup files: each asks (or is judged as the write it is).
    (TOOLS, "git status", Allow, "`git status`"),
    (TOOLS, "git log --pretty=tformat:%h%GG", Ask, "shows signatures"),
    (TOOLS, "git log --format \"$F\"", Ask, "expansion"),
    (TOOLS, "git for-each-ref --format='%(signature)'", Ask, "verifies signatures"),
    (TOOLS, "git for-each-ref --form='%(refname) %(signature:grade)'", Ask, "verifies signatures"),
    (TOOLS, "git branch --forma '%(signature:key)'", Ask, "verifies signatures"),
    (TOOLS, "git tag -l --form='%(signature)'", Ask, "verifies signatures"),
    (TOOLS, "git log --pre=%GG", Ask, "shows signatures"),
    (TOOLS, "git for-each-ref --format='%(refname) %(contents:subject)'", Allow, "`git for-each-ref"),
    (TOOLS, "git -c gpg.program=x log", Ask, "sets a program"),
    (TOOLS, "git -c core.worktree=.. status", Ask, "sets a program"),
    (TOOLS, "git verify-tag v1", Ask, "cannot see"),
    (TOOLS, "GIT_OBJECT_DIRECTORY=x git log", Ask, "`GIT_OBJECT_DIRECTORY`"),
    (TOOLS, "GIT_TRACE_PACKET=t git status", Ask, "`GIT_TRACE_PACKET`"),
    (TOOLS, "git --paginate log", Ask, "pager"),
    (TOOLS, "HOME=. git log", Ask, "`HOME`"),
    (TOOLS, "XDG_CONFIG_HOME=cfg git log", Ask, "`XDG_CONFIG_HOME`"),
    (TOOLS, "rg -z KEY", Ask, "`rg -z`"),
    (TOOLS, "diff --pagi a b", Ask, "`diff --paginate`"),
    (TOOLS, "jq -n 'import \"m\" as m; m::f'", Ask, "`import`"),
    (TOOLS, "jq -n '.important'", Allow, "`jq -n .important`"),
    (TOOLS, "ENV=x sh -c ls", Ask, "`ENV`"),
    (TOOLS, "sh -i -c ls", Ask, "startup files"),
    (TOOLS, "time -o /etc/t ls", Deny, "`/etc/t` matches the deny rule `/etc/**`"),
    (TOOLS, "time --output=t.txt ls", Ask, "t.txt"),
    (TOOLS, "time --outp=/etc/t ls", Deny, "`/etc/t` matches the deny rule `/etc/**`"),
    (TOOLS, "command time -ao ~/.ssh/t ls", Deny, "floor"),
    (TOOLS, "exec -l bash -c ls", Ask, "`exec -l`"),
    (TOOLS, "exec -a -sh sh -c ls", Ask, "`exec -a`"),
    (TOOLS, "sort -T /etc a", Deny, "`/etc` matches the deny rule `/etc/**`"),
    (TOOLS, "sort -o - a", Ask, "-"),
    (TOOLS, "du --si ~", Ask, "lists the names of every file below"),
    (TOOLS, "du -sh src", Allow, "`du -sh src`"),
    (TOOLS, "du {src,~}", Ask, "lists the names of every file below"),
    (TOOLS, "du -s {.,..}/..", Ask, "lists the names of every file below"),
    (TOOLS, "bash -c 'du -c {~,src}'", Ask, "lists the names of every file below"),
    (TOOLS, "find -files0-from list -name x", Ask, "`find -files0-from`"),
    (TOOLS, "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=sh cargo test", Ask, "`CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER`"),
    (TOOLS, "cargo check --manifest-path ../x/Cargo.toml", Ask, "`cargo --manifest-path`"),
    (TOOLS, "cargo build --release", Allow, "`cargo build --release`"),
    (TOOLS, "npm run build --node-gyp=x", Ask, "`npm --node-gyp`"),
    (TOOLS, "NPM_CONFIG_SCRIPT_SHELL=sh npm test", Ask, "`NPM_CONFIG_SCRIPT_SHELL`"),
    (TOOLS, "node --report-on-signal app.js", Ask, "`node --report-on-signal`"),
    (TOOLS, "node --test --env-file=.env", Ask, "`node --env-file`"),
    (TOOLS, "node --test --tls-keylog=keys.txt", Ask, "`node --tls-keylog`"),
    (TOOLS, "cargo nextest run --tool-config-file x:y.toml", Ask, "`cargo --tool-config-file`"),
    (TOOLS, "pytest --junit-x=out.xml", Ask, "`pytest --junit-xml`"),
    (TOOLS, "python3 -m pytest --junitxml=o.xml", Ask, "`pytest --junitxml`"),
    (TOOLS, "PYTEST_ADDOPTS=--basetemp=x pytest", Ask, "`PYTEST_ADDOPTS`"),
    (TOOLS, "pytest -q tests", Allow, "`pytest -q tests`"),
    (TOOLS, "mypy --cache-d x app", Ask, "`mypy --cache-dir`"),
    (TOOLS, "ruff check -o out.txt .", Ask, "`ruff -o`"),
    (TOOLS, "pylint --load-plugins=x app", Ask, "`pylint --load-plugins`"),
    (TOOLS, "pylint --import-graph=deps.dot app", Ask, "`pylint --import-graph`"),
    (TOOLS, "uv run --with x pytest", Ask, "`uv --with`"),

    // Raw mode keeps one regex over the whole string, bypasses included.
    (ECHO_RAW, "echo test && ls", Allow, "the command matches the allow rule `^echo( |$)`"),
    (ECHO_RAW, "ls; echo test", Ask, "no allow rule matched the command"),
    (GIT_RAW, "git status; rm -rf ~", Allow, "the command matches the allow rule `^git( |$)`"),
    (GIT_RAW, "git fetch && git clean -fd", Allow, "allow rule `^git( |$)`"),
    (GIT_RAW, "git clean -fd", Deny, "the command matches the deny rule `^git clean`"),
];

#[test]
fn command_table() {
    assert!(CASES.len() >= 150, "{} cases", CASES.len());
    let home = Home::new();
    let mut failures = Vec::new();
    for (policy_text, command, verdict, decider) in CASES {
        let policy = home.policy(policy_text, None);
        let call = ToolCall::new("exec_run", serde_json::json!({ "command": command }));
        let d = policy.evaluate(&call, &home.ctx);
        if d.verdict != *verdict || !d.reason.contains(decider) {
            failures.push(format!(
                "{command:?}: got {} ({}), want {verdict} naming {decider:?}",
                d.verdict, d.reason
            ));
        }
        // The direct entry point agrees with the tool-call one.
        assert_eq!(
            policy.evaluate_command(command, &home.ctx),
            d,
            "{command:?}"
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

#[test]
fn every_part_is_explained() {
    let home = Home::new();
    let policy = home.policy(DEV, None);
    let e = policy.explain_command("git status && curl x | sh > /etc/x", &home.ctx);
    assert!(e.shell);
    assert_eq!(e.decision.verdict, Deny);
    let parts: Vec<(String, Verdict)> = e
        .parts
        .iter()
        .map(|p| (p.text.clone(), p.verdict))
        .collect();
    assert_eq!(
        parts,
        [
            ("git status && curl x | sh > /etc/x".to_string(), Deny),
            ("git status".to_string(), Allow),
            ("curl x".to_string(), Deny),
            ("sh".to_string(), Ask),
            ("/etc/x".to_string(), Deny),
            ("sh".to_string(), Ask),
        ]
    );
    let raw = home.policy(DEV, Some(false));
    let e = raw.explain_command("git status", &home.ctx);
    assert!(!e.shell && e.parts.is_empty());
    assert_eq!(e.decision.verdict, Allow);
}
