//! No program and no write hides behind an allowed command: programs that
//! run other programs through their options, subcommands and environment,
//! global options and flag spellings past deny rules, and writes hidden in
//! operands and options, against a "careful user" policy written from the
//! README; benign look-alikes keep their verdict.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod shell_common;

use sandgate_policy::shell::programs::{Runs, FILE_VARIABLES, PROGRAM_VARIABLES};
use sandgate_policy::shell::registry::{programs, writers};
use sandgate_policy::{ToolCall, Verdict};
use shell_common::Home;

use Verdict::{Allow, Ask, Deny};

/// A policy a README user writes in ten minutes.
const CAREFUL: &str = r#"
permissions:
  paths:
    deny: ["/etc/**"]
    allow: ["./**"]
  commands:
    deny:
      - '^git\s+(reset\s+--hard|clean)'
      - '^git push -f'
      - '^rm -f -r /'
      - '^chmod -R 777'
    allow:
      - "^git( |$)"
      - "^find "
      - "^sed -n"
      - "^sed "
      - "^python3? "
      - "^node "
      - "^perl "
      - "^ruby "
      - "^awk "
      - "^sort( |$)"
      - "^tar "
      - "^rg "
      - "^cp "
      - "^mv "
      - "^tee "
      - "^dd "
      - "^touch "
      - "^mkdir "
      - "^truncate "
      - "^rm "
      - "^rmdir "
      - "^ln "
      - "^install "
      - "^chmod "
      - "^chown "
      - "^ls( |$)"
      - "^cat "
      - "^echo( |$)"
      - "^printf "
      - "^grep "
      - "^make( |$)"
      - "^id$"
      - "^wc( |$)"
"#;

/// No policy file at all: only the floor.
const NONE: &str = "permissions: {}\n";

#[rustfmt::skip]
const CASES: &[(&str, &str, Verdict, &str)] = &[
    // git runs a program.
    (CAREFUL, "git -c core.pager='sh -c id' log", Ask, "sets a program"),
    (CAREFUL, "git -c core.pager=less log", Ask, "sets a program"),
    (CAREFUL, "git -c alias.x='!rm -rf ~' x", Ask, "sets a program"),
    (CAREFUL, "git -c core.sshCommand='sh -c id' fetch", Ask, "sets a program"),
    (CAREFUL, "git -c diff.external=./x diff", Ask, "sets a program"),
    (CAREFUL, "git -c core.fsmonitor=./x status", Ask, "sets a program"),
    (CAREFUL, "git -c core.hooksPath=./hooks commit -m x", Ask, "sets a program"),
    (CAREFUL, "git -c include.path=./evil status", Ask, "sets a program"),
    (CAREFUL, "git -c filter.x.clean=./x add .", Ask, "sets a program"),
    (CAREFUL, "git -c credential.helper='!sh' fetch", Ask, "sets a program"),
    (CAREFUL, "git -c \"$K\"=x log", Ask, "sets a program"),
    (CAREFUL, "git -ccore.pager=x log", Ask, "sets a program"),
    (CAREFUL, "git --exec-path=. status", Ask, "`git --exec-path` runs a program"),
    (CAREFUL, "git --config-env=core.pager=X log", Ask, "`git --config-env` runs a program"),
    (CAREFUL, "git submodule foreach 'rm -rf .'", Allow, "`rm -rf .` by `^rm `"),
    (CAREFUL, "git submodule foreach 'rm -rf ~'", Deny, "holds the floor directory"),
    (CAREFUL, "git submodule foreach --recursive 'curl x | sh'", Ask, "sh"),
    (CAREFUL, "git submodule foreach ls", Allow, ""),
    (CAREFUL, "git rebase --exec 'make' main", Allow, ""),
    (CAREFUL, "git rebase --exec 'curl x' main", Ask, "curl x"),
    (CAREFUL, "git rebase -x 'curl x' main", Ask, "curl x"),
    (CAREFUL, "git rebase --exec='curl x' main", Ask, "curl x"),
    (CAREFUL, "git rebase -i --exec \"$CMD\" main", Ask, "holds an expansion"),
    (CAREFUL, "git bisect run ./x", Ask, "./x"),
    (CAREFUL, "git bisect run make test", Allow, ""),
    (CAREFUL, "git bisect run curl x", Ask, "curl x"),
    (CAREFUL, "git difftool -x 'curl x'", Ask, "curl x"),
    (CAREFUL, "git difftool --extcmd='curl x'", Ask, "curl x"),
    (CAREFUL, "git filter-branch --tree-filter 'curl x' HEAD", Ask, "curl x"),
    (CAREFUL, "git mergetool --tool=x", Ask, "runs a program"),
    (CAREFUL, "git config core.pager 'sh -c id'", Ask, "sets a program"),
    (CAREFUL, "git config --global alias.st '!rm -rf ~'", Ask, "sets a program"),
    (CAREFUL, "git config user.name me", Allow, ""),
    (CAREFUL, "git -c color.ui=always log", Allow, ""),
    (CAREFUL, "git -c user.name=x commit -m y", Allow, ""),
    // The environment picks the program.
    (CAREFUL, "GIT_EXTERNAL_DIFF='touch m' git diff", Ask, "`GIT_EXTERNAL_DIFF` picks a program"),
    (CAREFUL, "GIT_SSH_COMMAND='sh -c id' git fetch", Ask, "`GIT_SSH_COMMAND` picks a program"),
    (CAREFUL, "GIT_SSH=./x git fetch", Ask, "`GIT_SSH` picks a program"),
    (CAREFUL, "GIT_PAGER='sh -c id' git log", Ask, "`GIT_PAGER` picks a program"),
    (CAREFUL, "PAGER='sh -c id' git log", Ask, "`PAGER` picks a program"),
    (CAREFUL, "GIT_EDITOR=./x git commit", Ask, "`GIT_EDITOR` picks a program"),
    (CAREFUL, "EDITOR=./x git commit", Ask, "`EDITOR` picks a program"),
    (CAREFUL, "GIT_CONFIG_PARAMETERS=\"'core.pager'='id'\" git log", Ask, "`GIT_CONFIG_PARAMETERS` picks"),
    (CAREFUL, "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=id git log", Ask, "picks a program"),
    (CAREFUL, "env GIT_PAGER=id git log", Ask, "`GIT_PAGER` picks a program"),
    (CAREFUL, "env -i PAGER=id git log", Ask, "`PAGER` picks a program"),
    (CAREFUL, "export GIT_PAGER=id; git log", Ask, "`GIT_PAGER` picks a program"),
    (CAREFUL, "GIT_PAGER=id; git log", Ask, "`GIT_PAGER` picks a program"),
    (CAREFUL, "LESSOPEN='|id %s' git log", Ask, "`LESSOPEN` picks a program"),
    (CAREFUL, "NODE_OPTIONS='--require ./x' node app.js", Ask, "`NODE_OPTIONS` picks a program"),
    (CAREFUL, "PERL5OPT=-Mx perl x.pl", Ask, "`PERL5OPT` picks a program"),
    (CAREFUL, "PYTHONPATH=. python3 x.py", Ask, "`PYTHONPATH` picks a program"),
    (CAREFUL, "PATH=.:$PATH git log", Ask, "no allow rule matched"),
    (CAREFUL, "BASH_ENV=./x bash -c 'git log'", Ask, ""),
    (CAREFUL, "GIT_AUTHOR_NAME=x git commit -m y", Allow, ""),
    (CAREFUL, "LANG=C git log", Allow, ""),
    // Global options do not hide the subcommand from deny rules.
    (CAREFUL, "git reset --hard", Deny, "deny rule"),
    (CAREFUL, "git -C repo reset --hard", Deny, "(as `git reset --hard`)"),
    (CAREFUL, "git --no-pager reset --hard", Deny, "(as `git reset --hard`)"),
    (CAREFUL, "git -P reset --hard", Deny, "(as `git reset --hard`)"),
    (CAREFUL, "git -p reset --hard HEAD~1", Deny, "(as `git reset --hard HEAD~1`)"),
    (CAREFUL, "git -c x=y reset --hard", Deny, "(as `git reset --hard`)"),
    (CAREFUL, "git --git-dir=.git --work-tree=. clean -fdx", Deny, "(as `git clean -fdx`)"),
    (CAREFUL, "git --git-dir .git --work-tree . clean -fdx", Deny, "(as `git clean -fdx`)"),
    (CAREFUL, "git --bare --no-replace-objects reset --hard", Deny, "deny rule"),
    (CAREFUL, "git -C a -C b --no-pager -c x=y reset --hard", Deny, "deny rule"),
    (CAREFUL, "git --namespace=x --literal-pathspecs clean -f", Deny, "deny rule"),
    (CAREFUL, "/usr/bin/git -C repo reset --hard", Deny, "deny rule"),
    (CAREFUL, "sudo git -C repo reset --hard", Deny, "deny rule"),
    (CAREFUL, "bash -c 'git --no-pager clean -fdx'", Deny, "deny rule"),
    (CAREFUL, "timeout 5 git -C x clean -n", Deny, "deny rule"),
    // Flags in one spelling.
    (CAREFUL, "git push -f origin main", Deny, "deny rule `^git push -f`"),
    (CAREFUL, "git push --force origin main", Deny, "(as `git push -f origin main`)"),
    (CAREFUL, "git push -fu origin main", Deny, "deny rule `^git push -f`"),
    (CAREFUL, "git push -uf origin main --force-with-lease", Deny, "(as `git push -f -u origin main --force-with-lease`)"),
    (CAREFUL, "git push -uf origin main", Deny, "deny rule `^git push -f`"),
    (CAREFUL, "git push -df origin main", Deny, "deny rule `^git push -f`"),
    (CAREFUL, "git push -fd origin main", Deny, "deny rule `^git push -f`"),
    (CAREFUL, "git push -uqf origin main", Deny, "deny rule `^git push -f`"),
    (CAREFUL, "git push -d -f origin main", Deny, "deny rule `^git push -f`"),
    (CAREFUL, "git push -4 --force origin main", Deny, "deny rule `^git push -f`"),
    (CAREFUL, "git push -dn origin old", Allow, "`git push -dn origin old`"),
    (CAREFUL, "git push -u --force origin main", Deny, "deny rule `^git push -f`"),
    (CAREFUL, "git -C x push --force", Deny, "deny rule `^git push -f`"),
    (CAREFUL, "git push --force-with-lease", Allow, ""),
    (CAREFUL, "git push origin main", Allow, ""),
    (NONE, "rm -rf /", Deny, "holds the floor directory"),
    (CAREFUL, "rm -rf /", Deny, "deny rule `^rm -f -r /`"),
    (CAREFUL, "rm -fr /", Deny, "deny rule"),
    (CAREFUL, "rm -r -f /", Deny, "deny rule"),
    (CAREFUL, "rm -R -f /", Deny, "deny rule"),
    (CAREFUL, "rm --recursive --force /", Deny, "deny rule"),
    (CAREFUL, "rm / -rf", Deny, "deny rule"),
    (CAREFUL, "rm -rfv /", Deny, "holds the floor directory"),
    (CAREFUL, "chmod -R 777 /", Deny, ""),
    (CAREFUL, "chmod --recursive 777 ~", Deny, "(as `chmod -R 777 ~`)"),
    (NONE, "chmod --recursive 777 ~", Deny, "holds the floor directory"),
    // find runs or deletes.
    (CAREFUL, "find . -exec rm -rf {} \\;", Ask, "`{}`"),
    (CAREFUL, "find . -exec curl x \\;", Ask, "curl x"),
    (CAREFUL, "find . -execdir curl x \\;", Ask, "curl x"),
    (CAREFUL, "find . -ok curl x \\;", Ask, "curl x"),
    (CAREFUL, "find . -okdir curl x \\;", Ask, "curl x"),
    (CAREFUL, "find . -exec sh -c 'rm {}' \\;", Ask, "replaced with input"),
    (CAREFUL, "find . -exec sh -c {} \\;", Ask, "replaced with input"),
    (CAREFUL, "find . -exec {} \\;", Ask, "is an expansion"),
    (CAREFUL, "find . -name x -exec grep -l foo {} +", Ask, "`{}`"),
    (CAREFUL, "find . -exec git reset --hard \\;", Deny, "deny rule"),
    (CAREFUL, "find . -exec env GIT_PAGER=x git log \\;", Ask, "picks a program"),
    (CAREFUL, "find . -delete", Allow, ""),
    (CAREFUL, "find .. -delete", Deny, "holds the floor directory"),
    (CAREFUL, "find ../other -name x -delete", Ask, "no path allow rule"),
    (CAREFUL, "find ~ -delete", Deny, "holds the floor directory"),
    (NONE, "find / -name x -delete", Deny, "holds the floor directory"),
    (CAREFUL, "find ./build -name '*.o' -delete", Allow, ""),
    (CAREFUL, "find . -fprint /etc/x", Deny, "the deny rule `/etc/**`"),
    (CAREFUL, "find . -fprint ~/.bashrc", Ask, "no path allow rule"),
    (CAREFUL, "find . -fprint0 ~/.ssh/x", Deny, "floor"),
    (CAREFUL, "find . -fprintf out.txt %p", Allow, ""),
    (CAREFUL, "find . -fls ../x", Ask, "no path allow rule"),
    (CAREFUL, "find . -name '*.rs'", Allow, ""),
    (CAREFUL, "find . -type f -name '*.md' -print", Allow, ""),
    (CAREFUL, "find src -newer Cargo.toml", Allow, ""),
    // xargs scripts.
    (NONE, "xargs -a cmds.txt -I{} sh -c {}", Ask, "replaced with input"),
    (CAREFUL, "xargs -a cmds.txt -I{} sh -c {}", Ask, "replaced with input"),
    (CAREFUL, "printf 'a\\n' | xargs -I{} sh -c 'ls {}'", Ask, "replaced with input"),
    (CAREFUL, "printf 'a\\n' | xargs -I % sh -c 'ls %'", Ask, "replaced with input"),
    (CAREFUL, "printf 'a\\n' | xargs --replace sh -c 'ls {}'", Ask, "replaced with input"),
    (CAREFUL, "printf 'a\\n' | xargs -i sh -c 'ls {}'", Ask, "replaced with input"),
    (CAREFUL, "find . -name '*.rs' | xargs grep foo", Ask, "`xargs` adds words"),
    (CAREFUL, "echo ~/.ssh/id_rsa | xargs cat", Ask, ""),
    (CAREFUL, "echo ~/.ssh/id_rsa | xargs cat -n", Ask, "`xargs` adds words"),
    (CAREFUL, "ls | xargs echo", Allow, ""),
    (CAREFUL, "ls | xargs curl", Ask, "curl"),
    // Empty and placeholder scripts.
    (NONE, "sh -c ''", Ask, "runs no command"),
    (NONE, "sh -c '#'", Ask, "runs no command"),
    (NONE, "sh -c {}", Ask, "runs no command"),
    (NONE, "bash -c '   '", Ask, "runs no command"),
    (CAREFUL, "sh -c ''", Ask, "runs no command"),
    (CAREFUL, "sh -c 'ls'", Allow, ""),
    (CAREFUL, "bash -c 'git status'", Allow, ""),
    // Inline program text.
    (CAREFUL, "python3 -c 'import shutil; shutil.rmtree(\"/\")'", Ask, "`python3 -c` runs a program"),
    (CAREFUL, "python -c 'print(1)'", Ask, "`python -c` runs a program"),
    (CAREFUL, "python3 -Bc 'x'", Ask, "`python3 -c`"),
    (CAREFUL, "node -e 'require(\"fs\").rmSync(\"/\")'", Ask, "`node -e`"),
    (CAREFUL, "node --eval 'x'", Ask, "`node --eval`"),
    (CAREFUL, "node -p 'x'", Ask, "`node -p`"),
    (CAREFUL, "node --print='x'", Ask, "`node --print`"),
    (CAREFUL, "perl -e 'unlink glob \"*\"'", Ask, "`perl -e`"),
    (CAREFUL, "perl -pie 's/a/b/' f", Ask, "`perl -e`"),
    (CAREFUL, "perl -E 'say 1'", Ask, "`perl -E`"),
    (CAREFUL, "ruby -e 'File.delete(\"x\")'", Ask, "`ruby -e`"),
    (CAREFUL, "awk 'BEGIN{system(\"rm -rf ~\")}'", Ask, "can run commands (`system`)"),
    (CAREFUL, "awk '{print > \"/etc/x\"}' f", Deny, "writes a path: `/etc/x` matches the deny rule"),
    (CAREFUL, "awk '{print > \"/tmp/out.txt\"}' f", Ask, "writes a path"),
    (CAREFUL, "awk '{print > $2}' f", Ask, "writes a file whose name is only known at run time"),
    (CAREFUL, "awk '{print | \"sh\"}' f", Ask, "can run commands through a pipe"),
    (CAREFUL, "awk '\"id\" | getline x' f", Ask, "can run commands through a pipe"),
    (CAREFUL, "awk -F: '{ system($1) }' f", Ask, "can run commands"),
    (CAREFUL, "awk \"$PROG\" f", Ask, "could run commands or open any file"),
    (CAREFUL, "awk '{print $1}' notes.txt", Allow, ""),
    (CAREFUL, "awk -F, 'NR > 1 {n++} END {print n}' data.csv", Allow, ""),
    (CAREFUL, "awk -f prog.awk data.csv", Allow, ""),
    (CAREFUL, "python3 script.py", Allow, ""),
    (CAREFUL, "python3 -m pytest -q", Allow, ""),
    (CAREFUL, "node app.js", Allow, ""),
    (CAREFUL, "perl x.pl", Allow, ""),
    // Readers that run or write.
    (CAREFUL, "sed -n '1e rm -rf ~' f", Ask, "sed's `e` command runs"),
    (CAREFUL, "sed -n 'e id' f", Ask, "sed's `e` command runs"),
    (CAREFUL, "sed 's/x/id/e' f", Ask, "`s///e` flag runs"),
    (CAREFUL, "sed -n -e 'p' -e '1e id' f", Ask, "`e` command"),
    (CAREFUL, "sed -ne '1e id' f", Ask, "`e` command"),
    (CAREFUL, "sed --expression='1e id' f", Ask, "`e` command"),
    (CAREFUL, "sed -n 'w ~/.bashrc' f", Ask, "no path allow rule"),
    (CAREFUL, "sed -n 'w /etc/x' f", Deny, "the deny rule `/etc/**`"),
    (CAREFUL, "sed -n '1w ~/.ssh/authorized_keys' f", Deny, "floor"),
    (CAREFUL, "sed 's/a/b/w /etc/x' f", Deny, "`/etc/**`"),
    (CAREFUL, "sed -n 's/a/b/w out.txt' f", Allow, ""),
    (CAREFUL, "sed -n 'r ~/.ssh/id_rsa' f", Deny, "floor"),
    (CAREFUL, "sed -n \"w $F\" f", Ask, "expansion"),
    (CAREFUL, "sed -i s/a/b/ ~/.bashrc", Ask, "no path allow rule"),
    (CAREFUL, "sed -i 's/a/b/' /etc/hosts", Deny, "`/etc/**`"),
    (CAREFUL, "sed -i.bak 's/a/b/' ../x", Ask, "no path allow rule"),
    (CAREFUL, "sed --in-place 's/a/b/' ~/.ssh/config", Deny, "floor"),
    (CAREFUL, "sed -i 's/a/b/' notes.txt", Allow, ""),
    (CAREFUL, "sed -n 1,5p f", Allow, ""),
    (CAREFUL, "sed -n '/start/,/end/p' f", Allow, ""),
    (CAREFUL, "sed 's/a/b/g' f", Allow, ""),
    (CAREFUL, "sed -E 's/(a)/\\1/' f", Allow, ""),
    (CAREFUL, "rg --pre=./x foo", Ask, "`rg --pre` runs a program"),
    (CAREFUL, "rg --pre ./x foo", Ask, "`rg --pre`"),
    (CAREFUL, "rg --pre-glob '*.gz' foo", Allow, ""),
    (CAREFUL, "rg -n foo src", Allow, ""),
    (CAREFUL, "sort --compress-program=sh f", Ask, "`sort --compress-program` runs"),
    (CAREFUL, "sort -o ~/.bashrc f", Ask, "no path allow rule"),
    (CAREFUL, "sort -o /etc/passwd f", Deny, "`/etc/**`"),
    (CAREFUL, "sort -o~/.ssh/authorized_keys f", Deny, "floor"),
    (CAREFUL, "sort --output=../x f", Ask, "no path allow rule"),
    (CAREFUL, "sort -o sorted.txt f", Allow, ""),
    (CAREFUL, "sort f", Allow, ""),
    (CAREFUL, "sort -k2 -t, f", Allow, ""),
    (CAREFUL, "tar --to-command='sh -c id' -xf x.tar", Ask, "`tar --to-command`"),
    (CAREFUL, "tar -I 'sh -c id' -xf x.tar", Ask, "`tar -I`"),
    (CAREFUL, "tar --use-compress-program=./x -xf x.tar", Ask, "`tar --use-compress-program`"),
    (CAREFUL, "tar --checkpoint=1 --checkpoint-action=exec=id -cf x.tar .", Ask, "`tar --checkpoint-action`"),
    (CAREFUL, "tar -F ./x -cf x.tar .", Ask, "`tar -F`"),
    (CAREFUL, "tar tf x.tar", Allow, ""),
    (CAREFUL, "tar -tzf x.tar.gz", Allow, ""),
    (CAREFUL, "tar -C ~ -cf out.tar .ssh", Deny, "floor"),
    // Write operands.
    (CAREFUL, "cp x ~/.bashrc", Ask, "no path allow rule"),
    (CAREFUL, "cp x ~/.ssh/", Deny, "floor"),
    (CAREFUL, "cp x /etc/x", Deny, "`/etc/**`"),
    (CAREFUL, "cp -t ~/ x", Ask, "no path allow rule"),
    (CAREFUL, "cp --target-directory=/etc x", Deny, "`/etc/**`"),
    (CAREFUL, "cp -r src ../elsewhere", Ask, "no path allow rule"),
    (CAREFUL, "cp a b", Allow, ""),
    (CAREFUL, "cp -r src dst", Allow, ""),
    (CAREFUL, "cp a.txt sub/dir/", Allow, ""),
    (CAREFUL, "mv x ~/.profile", Ask, "no path allow rule"),
    (CAREFUL, "mv ~ /tmp/x", Deny, "holds the floor directory"),
    (CAREFUL, "mv a b", Allow, ""),
    (CAREFUL, "mv -t ../ a", Ask, "no path allow rule"),
    (CAREFUL, "install -m 755 x ~/bin/x", Ask, "no path allow rule"),
    (CAREFUL, "install -D x /etc/x", Deny, "`/etc/**`"),
    (CAREFUL, "install x build/x", Allow, ""),
    (CAREFUL, "ln -sf x ~/.bashrc", Ask, "no path allow rule"),
    (CAREFUL, "ln -s ~/.ssh/id_rsa key", Deny, "floor"),
    (CAREFUL, "ln -s target link", Allow, ""),
    (CAREFUL, "echo x | tee ~/.profile", Ask, "no path allow rule"),
    (CAREFUL, "echo x | tee -a /etc/hosts", Deny, "`/etc/**`"),
    (CAREFUL, "echo x | tee out.txt", Allow, ""),
    (CAREFUL, "dd if=/dev/zero of=~/.bashrc", Ask, "no path allow rule"),
    (CAREFUL, "dd if=x of=/etc/x bs=1", Deny, "`/etc/**`"),
    (CAREFUL, "dd if=x of=out.bin", Allow, ""),
    (CAREFUL, "touch ~/.bashrc", Ask, "no path allow rule"),
    (CAREFUL, "touch ~/.ssh/authorized_keys", Deny, "floor"),
    (CAREFUL, "touch new.txt", Allow, ""),
    (CAREFUL, "touch -d yesterday new.txt", Allow, ""),
    (CAREFUL, "mkdir ~/x", Ask, "no path allow rule"),
    (CAREFUL, "mkdir -p build/x", Allow, ""),
    (CAREFUL, "mkdir -m 700 ~/.ssh2", Ask, "no path allow rule"),
    (CAREFUL, "truncate -s 0 ~/.bash_history", Ask, "no path allow rule"),
    (CAREFUL, "truncate -s 0 log.txt", Allow, ""),
    (CAREFUL, "rm ~/.bashrc", Ask, "no path allow rule"),
    (CAREFUL, "rm -f ~/.ssh/known_hosts", Deny, "floor"),
    (CAREFUL, "rm -rf ~", Deny, "holds the floor directory"),
    (NONE, "rm -rf ~", Deny, "holds the floor directory"),
    (NONE, "rm -rf ~/", Deny, "holds the floor directory"),
    (NONE, "rm -r --force $HOME", Deny, "holds the floor directory"),
    (NONE, "rm -rf ..", Deny, "holds the floor directory"),
    (NONE, "cd / && rm -rf home", Ask, ""),
    (CAREFUL, "rm -rf build", Allow, ""),
    (CAREFUL, "rm build/x.o", Allow, ""),
    (CAREFUL, "rm -rf ../other", Ask, "no path allow rule"),
    (CAREFUL, "rmdir ~/x", Ask, "no path allow rule"),
    (CAREFUL, "rmdir empty", Allow, ""),
    (NONE, "chmod -R 777 ~", Deny, "holds the floor directory"),
    (NONE, "chown -R nobody ~", Deny, "holds the floor directory"),
    (NONE, "chgrp -R nogroup ~", Deny, "holds the floor directory"),
    (CAREFUL, "chmod 600 ~/.ssh/id_rsa", Deny, "floor"),
    (CAREFUL, "chmod +x run.sh", Allow, ""),
    (CAREFUL, "chmod -R u+w src", Allow, ""),
    (CAREFUL, "chown me ~/.profile", Ask, "no path allow rule"),
    (CAREFUL, "git log --output=/etc/x", Deny, "`/etc/**`"),
    (CAREFUL, "git log --output=../x", Ask, "no path allow rule"),
    (CAREFUL, "git diff --output ~/.bashrc", Ask, "no path allow rule"),
    (CAREFUL, "git format-patch -o ../patches HEAD~3", Ask, "no path allow rule"),
    (CAREFUL, "git format-patch -o /etc/x HEAD~1", Deny, "`/etc/**`"),
    (CAREFUL, "git format-patch --output-directory=~/p HEAD~1", Ask, "no path allow rule"),
    (CAREFUL, "git format-patch -o patches HEAD~3", Allow, ""),
    (CAREFUL, "git archive -o ../x.tar HEAD", Ask, "no path allow rule"),
    (CAREFUL, "git log -o x", Allow, ""),
    (CAREFUL, "git log -p", Allow, ""),
    (CAREFUL, "git log --oneline -n 5", Allow, ""),
    (CAREFUL, "git -C sub status", Allow, ""),
    (CAREFUL, "git --no-pager diff", Allow, ""),
    (CAREFUL, "git status", Allow, ""),
    (CAREFUL, "git diff HEAD~1 -- src/", Allow, ""),
    (CAREFUL, "git commit -am 'fix'", Allow, ""),
    // Benign look-alikes of every row.
    (CAREFUL, "ls -la", Allow, ""),
    (CAREFUL, "cat notes.txt", Allow, ""),
    (CAREFUL, "grep -rn foo .", Allow, ""),
    (CAREFUL, "echo '-exec' is a find option", Allow, ""),
    (CAREFUL, "grep -- --exec-path README.md", Allow, ""),
    (CAREFUL, "echo GIT_PAGER=x", Allow, ""),
    (CAREFUL, "grep PAGER= notes.txt", Allow, ""),
    (CAREFUL, "make", Allow, ""),
    (CAREFUL, "make -C sub", Allow, ""),
    (CAREFUL, "wc -l notes.txt", Allow, ""),
    (CAREFUL, "printf '%s\\n' a b", Allow, ""),
    (CAREFUL, "cat -e notes.txt", Allow, ""),
];

#[test]
fn programs_table() {
    let home = Home::new();
    std::fs::write(home.ctx.cwd.join("notes.txt"), "notes\n").unwrap();
    let mut failures = Vec::new();
    let mut total = 0;
    for (policy_text, command, verdict, decider) in CASES {
        total += 1;
        let policy = home.policy(policy_text, None);
        let call = ToolCall::new("exec_run", serde_json::json!({ "command": command }));
        let d = policy.evaluate(&call, &home.ctx);
        if d.verdict != *verdict || !d.reason.contains(decider) {
            failures.push(format!(
                "{command:?}: got {} ({}), want {verdict} naming {decider:?}",
                d.verdict, d.reason
            ));
        }
    }
    let generated = generated_cases();
    for (command, verdict) in &generated {
        total += 1;
        let policy = home.policy(CAREFUL, None);
        let d = policy.evaluate_command(command, &home.ctx);
        if d.verdict != *verdict {
            failures.push(format!(
                "{command:?}: got {} ({}), want {verdict}",
                d.verdict, d.reason
            ));
        }
    }
    assert!(total >= 300, "{total} cases");
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A case for every entry of the tables: each program-running option,
/// each program variable, each writer.
fn generated_cases() -> Vec<(String, Verdict)> {
    let mut out = Vec::new();
    for p in programs() {
        for o in p.options {
            let command = if o.name.is_empty() {
                format!("{} x", p.name)
            } else {
                match o.runs {
                    Runs::CommandUntilTerminator => format!("{} . {} curl x \\;", p.name, o.name),
                    Runs::CommandWords => format!("{} {} curl x", p.name, o.name),
                    Runs::Script | Runs::ScriptWords => format!("{} {} 'curl x'", p.name, o.name),
                    Runs::Hidden | Runs::NamesFromInput | Runs::Writes => {
                        format!("{} {} x y", p.name, o.name)
                    }
                }
            };
            out.push((command, Ask));
        }
        for (path, options) in p.subcommands {
            for o in *options {
                let command = match (o.name.is_empty(), o.runs) {
                    (true, _) => format!("{} {} curl x", p.name, path.join(" ")),
                    (false, Runs::Hidden | Runs::NamesFromInput | Runs::Writes) => {
                        format!("{} {} {} x", p.name, path.join(" "), o.name)
                    }
                    (false, _) => format!("{} {} {} 'curl x'", p.name, path.join(" "), o.name),
                };
                out.push((command, Ask));
            }
        }
    }
    for v in PROGRAM_VARIABLES.iter().chain(FILE_VARIABLES) {
        let name = v.replace('*', "0");
        out.push((format!("{name}=x git log"), Ask));
        out.push((format!("env {name}=x git log"), Ask));
    }
    for p in programs() {
        for (opt, _) in p.asking_globals {
            out.push((format!("{} {opt} x log", p.name), Ask));
        }
        for (opt, text, _) in p.asking_values {
            out.push((format!("{} log {opt}='x {text}'", p.name), Ask));
            out.push((format!("{} log {opt} 'x {text}'", p.name), Ask));
        }
        for (prefix, _) in p.asking_prefixes {
            out.push((format!("{} test {prefix}x=y", p.name), Ask));
        }
        for keyword in p.module_keywords {
            out.push((format!("{} -n '{keyword} \"m\"; 1'", p.name), Ask));
        }
    }
    for w in writers() {
        let command = match w.name {
            "dd" => "dd if=x of=/etc/x".to_string(),
            "sort" => "sort -o /etc/x f".to_string(),
            "chmod" | "chown" | "chgrp" => format!("{} x /etc/x", w.name),
            _ => format!("{} x /etc/x", w.name),
        };
        out.push((command, Deny));
        let command = match w.name {
            "dd" => "dd if=x of=~/.ssh/x".to_string(),
            "sort" => "sort -o ~/.ssh/x f".to_string(),
            _ => format!("{} x ~/.ssh/x", w.name),
        };
        out.push((command, Deny));
    }
    out
}

/// Every program variable, every program-running option and every writer is
/// a real entry: a name, and a case that the gate refuses to allow.
#[test]
fn every_table_entry_is_checked() {
    let cases = generated_cases();
    let options: usize = programs()
        .map(|p| p.options.len() + p.subcommands.iter().map(|(_, o)| o.len()).sum::<usize>())
        .sum();
    let asking: usize = programs()
        .map(|p| {
            p.asking_globals.len()
                + 2 * p.asking_values.len()
                + p.module_keywords.len()
                + p.asking_prefixes.len()
        })
        .sum();
    assert_eq!(
        cases.len(),
        options
            + 2 * (PROGRAM_VARIABLES.len() + FILE_VARIABLES.len())
            + 2 * writers().count()
            + asking
    );
    for p in programs() {
        assert!(
            !p.name.is_empty() && !p.name.contains([' ', '/']),
            "{}",
            p.name
        );
    }
}
