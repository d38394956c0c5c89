#!/usr/bin/env python3
"""The benchmarks' 1,000-rule policy: 250 rules in each of paths.deny,
paths.allow, commands.deny and commands.allow.

    thousand_rules.py OUT [--exec]

With --exec, the first command allow rule is `^true$` and exec isolation
is Landlock (side_by_side.sh's `exec -- true` row); the rule count stays
1,000.
"""
import sys

exec_row = "--exec" in sys.argv[2:]
words = ["git","cargo","npm","make","docker","kubectl","python3","ls","cat","sed","grep","rm","curl","wget","tar","ssh","scp","chmod","chown","find"]
subs = ["status","build","test","run","install","push","pull","log","diff","exec","apply","get","delete","list","show"]
n = 250
out = ["permissions:", "  paths:", "    deny:"]
for i in range(n):
    out.append(["      - '/srv/data%d/secrets/**'", "      - '~/private/p%d/*.key'", "      - '/var/lib/app%d/**/*.db'", "      - './vendor/pkg%d/**'"][i % 4] % i)
out.append("    allow:")
for i in range(n):
    out.append(["      - '~/projects/proj%d/**'", "      - '/tmp/work%d/*.txt'", "      - './src/mod%d/**/*.rs'", "      - '/opt/tools%d/bin/*'"][i % 4] % i)
out += ["  commands:", "    deny:"]
for i in range(n):
    w, s = words[i % len(words)], subs[i % len(subs)]
    out.append(["      - '^\\s*{w}\\s+{s}\\s+--danger{i}'", "      - '\\|\\s*{w}{i}\\b'", "      - '^{w} {s} (-f|--force) target{i}'",
                "      - '(?i)^{w}\\s+{s}{i}$'", "      - '{w}[0-9]+\\.{s}{i}'"][i % 5].format(w=w, s=s, i=i))
out.append("    allow:")
if exec_row:
    out.append("      - '^true$'")
for i in range(n - 1 if exec_row else n):
    w, s = words[i % len(words)], subs[i % len(subs)]
    out.append(["      - '^{w} {s}( |$)'", "      - '^{w} {s} --project p{i}( |$)'", "      - '^{w}\\s+(-v\\s+)?{s}{i}\\b'",
                "      - '^(sudo\\s+)?{w} {s}-{i} [a-z0-9_./-]+$'"][i % 4].format(w=w, s=s, i=i))
if exec_row:
    out += ["  exec:", "    isolation:", "      mode: landlock"]
open(sys.argv[1], "w").write("\n".join(out) + "\n")
