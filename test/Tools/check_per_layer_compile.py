#!/usr/bin/env python3
"""Plan = program for per-layer layouts: each per-layer point `helix plan
--json` reports (the fastest, and the best under the budget when there is
one) is compiled with `helix compile --per-layer on --gpus G --batch B
--emit planned-ir`; the planned IR's #helix.plan must list the same layouts
per kind and record the same TTL (1e-9 relative). Prints one line per point.
"""
import json
import re
import subprocess
import sys


def plan_attr(ir):
    m = re.search(r'helix\.plan = #helix\.plan<(.*?)>\}', ir, re.S)
    if not m:
        sys.exit("no helix.plan in the planned IR")
    return m.group(1)


def kinds_of(attr):
    out = {}
    for m in re.finditer(r'#helix\.kind_layout<([^>]*)>', attr):
        fields = dict(kv.split(' = ') for kv in m.group(1).split(', '))
        kind = fields.pop('kind')
        out[kind] = {k: int(v) for k, v in fields.items()}
    return out


def expected(point):
    out = {}
    for entry in point['per_layer']['layouts']:
        e = dict(entry)
        kind = e.pop('kind')
        attention = kind.endswith('attention')
        keys = ['layers', 'kvp', 'tpa'] if attention else ['layers', 'tpf', 'ep', 'replicas']
        out[kind] = {k: e.get(k, 1) for k in keys}
    return out


def main():
    helix, model, plan_json = sys.argv[1:4]
    extra = sys.argv[4:]
    per = json.load(open(plan_json))['per_layer']
    points = [('fastest', min(per['front'], key=lambda p: p['ttl_s']))]
    if per.get('budget') and per['budget'].get('best'):
        points.append(('budget', per['budget']['best']))
    for name, p in points:
        cmd = [helix, 'compile', '--model', model, '--per-layer', 'on',
               '--gpus', str(p['gpus']), '--batch', str(p['batch']),
               '--emit', 'planned-ir'] + extra
        ir = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        attr = plan_attr(ir)
        ttl = float(re.search(r'ttl_s = ([0-9.eE+-]+)', attr).group(1))
        got = {k: {f: v.get(f, 1) for f in expected(p)[k]} for k, v in kinds_of(attr).items()}
        if got != expected(p):
            sys.exit(f"{name}: compiled layouts {got} != planned {expected(p)}")
        if abs(ttl - p['ttl_s']) > 1e-9 * p['ttl_s']:
            sys.exit(f"{name}: compiled TTL {ttl} != planned {p['ttl_s']}")
        print(f"{name}: {p['gpus']} GPUs, batch {p['batch']}: layouts and TTL agree")


if __name__ == '__main__':
    main()
