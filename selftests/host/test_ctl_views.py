#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""kcollctl's text and JSON say the same thing, for every object.

Runs tools/kcollctl/test/kcollctl-mock (kcollctl linked against canned answers, mock.c) for
each show command, once as text and once with -j, and compares them record by record:

- the same number of records (a device, a communicator, an event: a line not indented, with
  its indented lines; a JSON array element or line);
- every string and number of a JSON record appears in its text record, but for the keys the
  text folds into another field or leaves out while they hold their "nothing" value
  (JSON_ONLY below);
- every number of a text record is a number of its JSON record, or part of one of its strings.

dev and comm run twice: over netlink and from sysfs (KCOLL_MOCK_NO_NL=1).  TAP output.
"""
import json
import os
import re
import subprocess
import sys

TOP = os.environ.get("TOP") or os.path.abspath(os.path.join(os.path.dirname(os.path.realpath(__file__)), "../.."))
MOCK = os.environ.get("KCOLLCTL_MOCK") or os.path.join(TOP, "tools/kcollctl/test/kcollctl-mock")

# (key, value) pairs the text does not repeat: the comm id and rank are in the name, the
# network namespace and owner uid are JSON's only, -1 is "default"/"auto", 0 errors and the
# step of a point-to-point operation are not worth a word.
JSON_ONLY = {
    "comm_id": None, "rank": None, "netns": None, "owner_uid": None,
    "tos": -1, "gid_index": -1, "error": 0, "last_err": 0, "step": 0, "nsteps": 0,
}

CASES = [
    ("info", ["info"], {}),
    ("dev over netlink", ["dev", "show"], {}),
    ("one dev over netlink", ["dev", "show", "rxe0"], {}),
    ("dev from sysfs", ["dev", "show"], {"KCOLL_MOCK_NO_NL": "1"}),
    ("comm over netlink", ["comm", "show"], {}),
    ("one comm over netlink", ["comm", "show", "abcdef"], {}),
    ("comm from sysfs", ["comm", "show"], {"KCOLL_MOCK_NO_NL": "1"}),
    ("engine", ["engine", "show"], {}),
    ("config", ["config", "show"], {}),
    ("stats", ["stats", "show"], {}),
    ("monitor", ["monitor", "count", "4"], {}),
]


def run(args, env):
    e = dict(os.environ)
    e.pop("KCOLL_SYSFS_ROOT", None)
    e.update(env)
    p = subprocess.run([MOCK] + args, env=e, capture_output=True, text=True, check=False)
    if p.returncode:
        raise AssertionError("%s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def text_records(text, args):
    """Blocks of a line that is not indented and the indented lines after it."""
    if args[0] in ("info", "config", "stats"):
        return [text]
    recs = []
    for line in text.splitlines():
        if line.startswith(" ") and recs:
            recs[-1] += "\n" + line
        else:
            recs.append(line)
    return recs


def json_records(out, args):
    if args[0] == "monitor":
        return [json.loads(line) for line in out.splitlines()]
    doc = json.loads(out)
    return doc if isinstance(doc, list) else [doc]


def leaves(v, key=None):
    """(key, value) of every string and number, with the key that holds it."""
    if isinstance(v, dict):
        for k, x in v.items():
            yield from leaves(x, k)
    elif isinstance(v, list):
        for x in v:
            yield from leaves(x, key)
    else:
        yield key, v


def number_in(n, text):
    return re.search(r"(?<![\w.-])%s(?![\d.])" % re.escape(str(n)), text) is not None


def compare(text, out, args):
    trec, jrec = text_records(text, args), json_records(out, args)
    if len(trec) != len(jrec):
        return ["%d text records, %d JSON records" % (len(trec), len(jrec))]
    errs = []
    for t, j in zip(trec, jrec):
        strings, numbers = [], set()
        for k, v in leaves(j):
            if isinstance(v, bool):
                continue
            if k in JSON_ONLY and JSON_ONLY[k] in (None, v):
                continue
            if isinstance(v, str):
                strings.append(v)
                if v not in t:
                    errs.append("JSON %s %r is not in the text: %s" % (k, v, t))
            else:
                numbers.add(v)
                if not number_in(v, t):
                    errs.append("JSON %s %r is not in the text: %s" % (k, v, t))
        all_numbers = {v for _, v in leaves(j) if isinstance(v, int)}
        all_strings = [v for _, v in leaves(j) if isinstance(v, str)]
        for m in re.finditer(r"(?<![\w.:-])(-?\d+)(?=B\b|ms\b|\b)", t):
            n = int(m.group(1))
            if n in all_numbers or any(m.group(1) in s for s in all_strings):
                continue
            errs.append("text number %d is not in the JSON: %s" % (n, json.dumps(j)))
    return errs


def main():
    if not os.access(MOCK, os.X_OK):
        print("1..0 # SKIP %s not built (make -C tools kcollctl/test/kcollctl-mock)" % MOCK)
        return 0
    print("TAP version 13")
    print("1..%d" % (len(CASES) + 2))
    fail = 0
    for i, (what, args, env) in enumerate(CASES, 1):
        try:
            errs = compare(run(args, env), run(["-j"] + args, env), args)
        except (AssertionError, ValueError) as e:
            errs = [str(e)]
        for e in errs:
            print("# " + e.replace("\n", "\n# "))
        print("%s %d - %s: text and JSON agree" % ("not ok" if errs else "ok", i, what))
        fail |= bool(errs)
    # The comparison must be able to fail: a device dropped from the JSON.
    text = run(["dev", "show"], {})
    out = json.dumps(json.loads(run(["-j", "dev", "show"], {}))[:1])
    bad = compare(text, out, ["dev", "show"])
    print("%s %d - a record missing from the JSON is caught" %
          ("ok" if bad else "not ok", len(CASES) + 1))
    fail |= not bad
    # Every setting of the store is shown, in both: the mock's transport and tcp_port.
    text, doc = run(["config", "show"], {}), json.loads(run(["-j", "config", "show"], {}))
    want = {"transport": "tcp", "tcp_port": 18777}
    errs = ["%s: JSON has %r" % (k, doc.get(k)) for k, v in want.items() if doc.get(k) != v]
    errs += ["no text line %r" % ("%s %s" % kv) for kv in want.items()
             if "%s %s" % kv not in text.splitlines()]
    for e in errs:
        print("# " + e)
    print("%s %d - config show has transport and tcp_port" %
          ("not ok" if errs else "ok", len(CASES) + 2))
    fail |= bool(errs)
    return fail


if __name__ == "__main__":
    sys.exit(main())
