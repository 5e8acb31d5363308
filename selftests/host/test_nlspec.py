#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The netlink spec (Documentation/netlink/specs/kcoll.yaml) is the reference: check that the
uAPI header and the kernel's policies follow it.  TAP output, one test per check.

- every enum of "definitions" is in include/uapi/linux/kcoll_netlink.h, same names and values
  (YNL naming: KCOLL_<ENUM>_<ENTRY>);
- every attribute set is an enum KCOLL_A_<SET>_<ATTR> with the spec's order;
- the operations are KCOLL_CMD_<OP> in the spec's order; the family name, version and
  multicast group agree;
- every min/max of the spec's "checks" is the bound kmod/kcoll_nl*.c enforces, and every
  attribute a do-request takes is in that command's policy.
"""
import os
import re
import sys

try:
    import yaml
except ImportError:
    print("TAP version 13\n1..0 # SKIP python3-yaml is not installed")
    sys.exit(0)

TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", ".."))
SPEC = os.path.join(TOP, "Documentation/netlink/specs/kcoll.yaml")
HDR = os.path.join(TOP, "include/uapi/linux/kcoll_netlink.h")
NLC = sorted(os.path.join(TOP, "kmod", f) for f in os.listdir(os.path.join(TOP, "kmod"))
             if re.match(r"kcoll_nl(_\w+)?\.c$", f))
CFG = os.path.join(TOP, "kmod/kcoll_config.h")
UAPI = os.path.join(TOP, "include/uapi/linux/kcoll.h")

results = []


def check(desc, problems):
    results.append((desc, problems))


def c_name(*parts):
    return "_".join(p.upper().replace("-", "_") for p in parts)


def header_enums(text):
    """Every enum block: list of (name, value) in order, values resolved for plain ones."""
    enums = []
    for m in re.finditer(r"enum\s*(\w*)\s*\{(.*?)\};", text, re.S):
        val = -1
        entries = []
        for line in m.group(2).split(","):
            line = re.sub(r"/\*.*?\*/", "", line, flags=re.S).strip()
            if not line:
                continue
            if "=" in line:
                name, expr = [x.strip() for x in line.split("=", 1)]
                try:
                    val = int(expr, 0)
                except ValueError:
                    entries.append((name, None))
                    continue
            else:
                name = line
                val += 1
            entries.append((name, val))
        enums.append((m.group(1), entries))
    return enums


def main():
    spec = yaml.safe_load(open(SPEC))
    hdr = open(HDR).read()
    nlc = "".join(open(f).read() for f in NLC)
    cfg = open(CFG).read()
    uapi = open(UAPI).read()
    values = {}
    for _, entries in header_enums(hdr) + header_enums(uapi):
        for name, val in entries:
            values[name] = val
    fam = spec["name"]

    probs = []
    if f'#define KCOLL_FAMILY_NAME\t"{fam}"' not in hdr:
        probs.append("KCOLL_FAMILY_NAME differs from the spec's name")
    ver = [d for d in spec["definitions"] if d["name"] == "family-version"][0]["value"]
    if not re.search(r"#define KCOLL_FAMILY_VERSION\s+%d\b" % ver, hdr):
        probs.append("KCOLL_FAMILY_VERSION differs")
    grp = spec["mcast-groups"]["list"][0]["name"]
    if not re.search(r'#define KCOLL_MCGRP_EVENTS\s+"%s"' % grp, hdr):
        probs.append("KCOLL_MCGRP_EVENTS differs")
    check("family name, version and multicast group", probs)

    probs = []
    for d in spec["definitions"]:
        if d["type"] != "enum":
            continue
        for i, e in enumerate(d["entries"]):
            n = c_name(fam, d["name"], e)
            if values.get(n) != i:
                probs.append(f"{n}: header {values.get(n)}, spec {i}")
    check("enums of the definitions", probs)

    probs = []
    sets = {}
    for s in spec["attribute-sets"]:
        sets[s["name"]] = s
        val = -1
        for a in s["attributes"]:
            val = a.get("value", val + 1)
            n = c_name(fam, "a", s["name"], a["name"])
            if values.get(n) != val:
                probs.append(f"{n}: header {values.get(n)}, spec {val}")
        n = c_name(fam, "a", s["name"], "max")
        if n not in values or "__" + n not in values:
            probs.append(f"no {n}")
    check("attribute sets", probs)

    probs = []
    val = -1
    for op in spec["operations"]["list"]:
        val = op.get("value", val + 1)
        n = c_name(fam, "cmd", op["name"])
        if values.get(n) != val:
            probs.append(f"{n}: header {values.get(n)}, spec {val}")
    check("operations", probs)

    # Bounds: the spec's min/max against the kernel's bound tables.
    probs = []
    const = {"KCOLL_MAX_RANKS": 4096, "U16_MAX": 65535, "S32_MAX": 2**31 - 1,
             "KCOLL_NUM_COLLECTIVES": values.get("KCOLL_NUM_COLLECTIVES"),
             "KCOLL_NUM_ALGORITHMS": values.get("KCOLL_NUM_ALGORITHMS"),
             "KCOLL_NUM_DATATYPES": values.get("KCOLL_NUM_DATATYPES"),
             "KCOLL_NUM_RED_OPS": values.get("KCOLL_NUM_RED_OPS")}
    # the configuration store's plain numeric constants (kmod/kcoll_config.h)
    for name, val in re.findall(r"#define (KCOLL_CONFIG_\w+)\s+(\d+)\s*$", cfg, re.M):
        const[name] = int(val)

    def ev(expr):
        expr = expr.strip()
        for k, v in const.items():
            expr = re.sub(r"\b%s\b" % k, str(v), expr)
        return int(eval(expr, {"__builtins__": {}}))  # arithmetic on literals only

    bounds = {}
    for m in re.finditer(r"\[(KCOLL_A_\w+)\]\s*=\s*\{\s*([^,]+),\s*([^,]+),\s*(true|false)",
                         nlc):
        bounds[m.group(1)] = (ev(m.group(2)), ev(m.group(3)))
    for s in spec["attribute-sets"]:
        for a in s["attributes"]:
            chk = a.get("checks", {})
            if "min" not in chk and "max" not in chk:
                continue
            n = c_name(fam, "a", s["name"], a["name"])
            if a["type"] == "u64":
                continue  # the comm id: its own validator (not 0)
            if n not in bounds:
                # Attributes only sent by the kernel need no bound.
                if re.search(r"\[%s\]\s*=\s*NLA_POLICY" % n, nlc):
                    probs.append(f"{n}: in a policy but without a bound")
                continue
            lo, hi = bounds[n]
            want_lo = chk.get("min", 0)
            want_hi = chk.get("max")
            if want_hi is None:
                want_hi = {"u8": 255, "u16": 65535, "u32": 2**32 - 1}.get(a["type"], hi)
            if (lo, hi) != (want_lo, want_hi):
                probs.append(f"{n}: kernel {lo}..{hi}, spec {want_lo}..{want_hi}")
    check("value ranges of the spec are the kernel's", probs)

    # Every attribute of a do-request is accepted by a policy of the kernel.
    probs = []
    for op in spec["operations"]["list"]:
        req = op.get("do", {}).get("request", {}).get("attributes", [])
        for a in req:
            n = c_name(fam, "a", op["attribute-set"], a)
            if not re.search(r"\[%s\]\s*=" % n, nlc):
                probs.append(f"{op['name']}: {n} is in no policy")
    check("every request attribute has a policy entry", probs)

    print("TAP version 13")
    print(f"1..{len(results)}")
    failed = 0
    for i, (desc, p) in enumerate(results, 1):
        for line in p:
            print(f"# {line}")
        print(f"{'not ok' if p else 'ok'} {i} {desc}")
        failed += bool(p)
    return 1 if failed else 0


sys.exit(main())
