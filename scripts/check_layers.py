#!/usr/bin/env python3
"""Layer check: fails on an #include that goes up or sideways between the layers that
docs/ARCHITECTURE.md draws ("Layers and folders").

    scripts/check_layers.py [--root DIR] [--allow FILE] [--lib BUILD/libsluice.a]

Every C, C++ and CUDA source and header under cli/, examples/, plans/, include/,
runtime/, operators/ and kernels/ is read; each #include is resolved the way the
library's build resolves it (the including file's folder, then include/, runtime/,
operators/, kernels/include/) and the edge is judged by allowed() below. tests/ and
bench/ are not checked: tests reach into internals on purpose.

Outside runtime/, creating or destroying a CUDA stream is a forbidden edge too: streams
come only from the runtime. With --lib, the runtime's objects in the static library are
checked too (nm): a runtime object may use no symbol an operator or kernel object
defines, except the registration interface (REGISTRATION). That catches calls that
dodge the includes with a declaration of their own.

Edges listed in the allowlist (scripts/layers_allow.txt: `from -> to` per line, where
`to` is a path, `<cuda>` or `call NAME`; `#` comments) are known debts being removed:
they are reported as allowed, and an entry that no longer matches any edge is reported
as stale (a warning, so that removing a debt never breaks the check).
Exit status: 0 clean, 1 a forbidden edge, 2 a bad allowlist or library.
"""
import argparse
import os
import re
import sys

SOURCE_DIRS = ("cli", "examples", "plans", "include", "runtime", "operators", "kernels")
SUFFIXES = (".c", ".h", ".h.in", ".cu", ".cuh")
# Where a quoted include is looked for after the including file's own folder, in the
# order the library's include_directories give (meson.build: inc_public, inc_runtime),
# then plans/ (the sluice command's ready-made plans).
SEARCH = ("include", "runtime", "operators", "kernels/include", "plans")
# Headers the build generates, and the layer each belongs to.
GENERATED = {
    "builtin_list.h": "operators/builtin_list.h",  # operators/meson.build
}
# The runtime headers that operators may include: the runtime's internal services
# published to built-in operators. Everything else in runtime/ is the runtime's own.
RUNTIME_PUBLISHED = ("runtime/internal.h", "runtime/gpu_ext.h", "runtime/value_text.h",
                     "runtime/exchange.h")
# The one place for helpers shared by operator families: the files directly in
# operators/ (operators.h and its sources). Should the shared helpers move into a folder
# of their own (operators/<name>/), add it here and in docs/ARCHITECTURE.md.
OPERATOR_SHARED = ("operators", "operators/common")
# Operator-family headers other families may include: the expression language, which
# filter, project and the file scans' pushed-down predicates all evaluate.
OPERATOR_PUBLISHED = ("operators/expr/expr.h",)
# The kernels' public launcher headers (extern "C", take a cudaStream_t).
KERNEL_LAUNCHERS = "kernels/include/sluice_k"
# Angle includes of the CUDA toolkit: only the library may talk to the GPU itself.
CUDA_HEADER = re.compile(r"^(cuda[a-z_]*\.h|cuda/.*|cub/.*|thrust/.*|nvrtc\.h)$")

# Calls only the runtime may make: streams come from the runtime (an operator borrows
# extra ones with sl__task_streams_get, runtime/gpu_ext.h), so nothing else creates one.
RUNTIME_ONLY_CALL = re.compile(r"\b(cudaStreamCreate\w*|cudaStreamDestroy)\s*\(")

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"]', re.M)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def layer_of(path):
    """(layer, group) of a repository-relative path; group tells folders of one layer
    apart where sideways edges matter (operator families)."""
    top = path.split("/", 1)[0]
    if path.startswith("include/sluice/"):
        return "public", ""
    if top in ("cli", "examples", "plans"):
        return "app", top
    if top == "runtime":
        return "runtime", ""
    if top == "operators":
        folder = os.path.dirname(path)
        if folder in OPERATOR_SHARED:
            return "operators", ""
        return "operators", "/".join(path.split("/")[:2])  # the family: operators/<name>
    if top == "kernels":
        return "kernels", ""
    if path == "<cuda>":
        return "cuda", ""
    return "other", top


def allowed(src, dst):
    """None when the edge src -> dst is allowed, else why it is not."""
    sl, sg = layer_of(src)
    dl, dg = layer_of(dst)
    if dl == "public":
        return None  # everyone may use the public API
    if sl == "public":
        return None if dl == "cuda" else "the public headers include only public headers"
    if sl == "app":
        if dl == "app":
            return None
        if dl == "cuda":
            return "cli/examples/plans use only the public API, not CUDA itself"
        return "cli/examples/plans use only the public API (include/sluice)"
    if sl == "runtime":
        if dl in ("runtime", "cuda"):
            return None
        if dl in ("operators", "kernels"):
            return ("the runtime reaches %s only through a registration interface it "
                    "owns, never by including them" % dl)
        return "upward edge from the runtime"
    if sl == "operators":
        if dl == "cuda":
            return None
        if dl == "runtime":
            if dst in RUNTIME_PUBLISHED:
                return None
            return ("operators use the runtime's published headers only (%s)"
                    % ", ".join(RUNTIME_PUBLISHED))
        if dl == "operators":
            if dg == "" or dg == sg or dst in OPERATOR_PUBLISHED:
                return None
            return ("sideways edge between operator families: share code through the "
                    "operators' shared helpers instead")
        if dl == "kernels":
            if dst.startswith(KERNEL_LAUNCHERS + "/"):
                return None
            return "operators call kernels through their launcher headers (%s)" % KERNEL_LAUNCHERS
        return "upward edge from an operator"
    if sl == "kernels":
        if dl in ("kernels", "cuda"):
            return None
        return "kernels know nothing of the runtime or the operators"
    return "unexpected edge"


def resolve(root, src, quote, name):
    """The repository-relative path an include names, '<cuda>' for a CUDA toolkit
    header, or None for a system header (not checked)."""
    if quote == "<":
        if name.startswith("sluice/"):
            return "include/" + name
        return "<cuda>" if CUDA_HEADER.match(name) else None
    for base in (os.path.dirname(src),) + SEARCH:
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand.replace(os.sep, "/")
    base = os.path.basename(name)
    if base in GENERATED:
        return GENERATED[base]
    return "?" + name


def sources(root):
    for top in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(SUFFIXES):
                    full = os.path.join(dirpath, f)
                    yield os.path.relpath(full, root).replace(os.sep, "/")


def edges(root):
    """(src, dst, line) for every checked include under root, and (src, "call NAME",
    line) for every call only the runtime may make, outside runtime/."""
    for src in sources(root):
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        # Blank comments out but keep newlines, so line numbers stay right.
        text = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
        for m in INCLUDE.finditer(text):
            dst = resolve(root, src, m.group(1), m.group(2))
            if dst is not None:
                yield src, dst, text.count("\n", 0, m.start()) + 1
        if layer_of(src)[0] != "runtime":
            for m in RUNTIME_ONLY_CALL.finditer(text):
                yield src, "call " + m.group(1), text.count("\n", 0, m.start()) + 1


def read_allowlist(path):
    allow = {}
    if not path or not os.path.exists(path):
        return allow
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = [p.strip() for p in line.split("->")]
            if len(parts) != 2 or not all(parts):
                raise ValueError("%s:%d: want `from -> to`" % (path, n))
            allow[tuple(parts)] = n
    return allow


def check(root, allow_path, out=sys.stdout):
    """Prints the findings; returns the number of forbidden edges."""
    allow = read_allowlist(allow_path)
    used = set()
    bad = 0
    for src, dst, line in edges(root):
        if dst.startswith("call "):
            why = "CUDA streams come only from the runtime (sl__task_streams_get)"
        elif dst.startswith("?"):
            why = "cannot resolve the include (a new generated header? add it to GENERATED)"
            dst = dst[1:]
        else:
            why = allowed(src, dst)
        if why is None:
            continue
        if (src, dst) in allow:
            used.add((src, dst))
            print("allowed (listed debt): %s:%d -> %s" % (src, line, dst), file=out)
            continue
        bad += 1
        verb = "" if dst.startswith("call ") else "includes "
        print("LAYER: %s:%d %s%s: %s" % (src, line, verb, dst, why), file=out)
    for edge, n in sorted(allow.items()):
        if edge not in used:
            print("warning: %s:%d: stale allowlist entry %s -> %s (remove it)"
                  % (allow_path, n, edge[0], edge[1]), file=out)
    return bad


# The only symbols runtime objects may take from the operators or the kernels: the
# registration interface the runtime declares and the operators define (internal.h).
REGISTRATION = ("sl__builtin_ops",)


def object_layer(member):
    """Layer of a static library member: meson names objects after their source path
    (runtime_x.c.o, operators_join_y.c.o); the kernels' nvcc objects are <dir>_<file>_cu.o."""
    for layer in ("runtime", "operators"):
        if member.startswith(layer + "_"):
            return layer
    return "kernels" if member.endswith("_cu.o") else "other"


def check_link(lib, out=sys.stdout, nm_lines=None):
    """Calls the include check cannot see: runtime objects that use a symbol defined by
    an operator or kernel object (other than REGISTRATION). Returns how many."""
    if nm_lines is None:
        import subprocess
        nm_lines = subprocess.run(["nm", "-A", lib], check=True, capture_output=True,
                                  text=True).stdout.splitlines()
    defined, used = {}, []
    for line in nm_lines:
        head, _, rest = line.rpartition(":")
        member = head.rsplit(":", 1)[-1]
        fields = rest.split()
        if len(fields) == 2 and fields[0] == "U":
            used.append((member, fields[1]))
        elif len(fields) == 3 and fields[1] in "TDBRVW" and fields[1].isupper():
            defined.setdefault(fields[2], member)
    bad = 0
    for member, name in used:
        owner = defined.get(name)
        if object_layer(member) != "runtime" or owner is None or name in REGISTRATION:
            continue
        if object_layer(owner) in ("operators", "kernels"):
            bad += 1
            print("LAYER: %s uses %s from %s: the runtime meets operators and kernels only "
                  "through its registration interface (%s)"
                  % (member, name, owner, ", ".join(REGISTRATION)), file=out)
    return bad


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.dirname(here), help="repository root")
    ap.add_argument("--allow", default=None,
                    help="allowlist (default: scripts/layers_allow.txt under the root)")
    ap.add_argument("--lib", default=None,
                    help="also check the calls of the runtime's objects in this static "
                         "library (libsluice.a)")
    a = ap.parse_args()
    allow = a.allow if a.allow is not None else os.path.join(a.root, "scripts", "layers_allow.txt")
    try:
        bad = check(a.root, allow)
        if a.lib:
            bad += check_link(a.lib)
    except (ValueError, OSError) as e:
        print("check_layers: %s" % e, file=sys.stderr)
        return 2
    if bad:
        print("check_layers: %d forbidden include edge(s); see docs/ARCHITECTURE.md, "
              "'Layers and folders'" % bad)
        return 1
    print("check_layers: layers clean")
    return 0


if __name__ == "__main__":
    sys.exit(main())
