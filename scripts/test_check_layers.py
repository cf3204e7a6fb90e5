#!/usr/bin/env python3
"""Self-test of scripts/check_layers.py: a small synthetic tree that keeps every layer
rule, then one forbidden edge at a time, each of which the check must catch (and name),
plus the allowlist and comment handling. Run by meson test (suite 'unit')."""
import io
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_layers  # noqa: E402

# A clean tree: every edge here is allowed.
CLEAN = {
    "include/sluice/sluice.h": '#include "engine.h"\n',
    "include/sluice/engine.h": "",
    "cli/cli.h": "#include <sluice/sluice.h>\n#include <stdio.h>\n",
    "cli/main.c": '#include "cli.h"\n#include "plans.h"\n',
    "plans/plans.h": "#include <sluice/sluice.h>\n",
    "examples/embed.c": "#include <sluice/sluice.h>\n",
    "runtime/internal.h": '#include "sluice/sluice.h"\n',
    "runtime/gpu_ext.h": '#include "internal.h"\n',
    "runtime/exec_int.h": '#include "internal.h"\n',
    "runtime/exec.c": ('#include "exec_int.h"\n#include <cuda_runtime_api.h>\n'
                       "void s(cudaStream_t *x) { cudaStreamCreate(x); }\n"),
    "runtime/cuda/cuda_int.h": '#include "internal.h"\n',
    "runtime/cuda/cuda_image.cu": "#include <cuda_runtime_api.h>\n",
    "operators/operators.h": '#include "internal.h"\n',
    "operators/builtin.c": '#include "builtin_list.h"\n#include "operators.h"\n',
    "operators/expr/expr.h": '#include "internal.h"\n',
    "operators/file/scan.c": '#include "expr/expr.h"\n',
    "operators/sort/sort_int.h": '#include "operators.h"\n',
    "operators/sort/sort_cuda.c": ('#include "sort_int.h"\n#include "gpu_ext.h"\n'
                                   '#include "sluice_k/sort.h"\n#include <cuda_runtime_api.h>\n'),
    "operators/join/join_int.h": '#include "operators.h"\n',
    "operators/join/join.c": '#include "join_int.h"\n',
    "kernels/include/sluice_k/sort.h": "#include <cuda_runtime_api.h>\n",
    "kernels/sort/sort_kernels.cuh": '#include "sluice_k/sort.h"\n',
    "kernels/sort/sort_launch.cu": '#include "sort_kernels.cuh"\n#include <cub/cub.cuh>\n',
    # tests/ are not checked: they may reach into anything.
    "tests/unit/test_x.c": '#include "exec_int.h"\n#include "sort/sort_int.h"\n',
}

# One forbidden edge each: (file, text appended, words the report must contain).
BAD = [
    ("runtime/registry.c", '#include "operators.h"\n', "runtime/registry.c:1 includes operators/operators.h"),
    ("runtime/cuda/cuda_device.c", '#include "sluice_k/sort.h"\n', "kernels/include/sluice_k/sort.h"),
    ("operators/join/join.c", '#include "../sort/sort_int.h"\n', "sideways"),
    ("operators/join/join.c", '#include "sort/sort_int.h"\n', "sideways"),
    ("operators/sort/sort_cuda.c", '#include "exec_int.h"\n', "published headers"),
    ("operators/join/join.c", '#include "../../kernels/sort/sort_kernels.cuh"\n', "launcher headers"),
    ("cli/main.c", '#include "internal.h"\n', "public API"),
    ("cli/main.c", "#include <cuda_runtime_api.h>\n", "not CUDA itself"),
    ("examples/embed.c", '#include "../operators/operators.h"\n', "public API"),
    ("kernels/sort/sort_launch.cu", '#include "internal.h"\n', "kernels know nothing"),
    ("include/sluice/engine.h", '#include "../../runtime/internal.h"\n', "only public headers"),
    ("runtime/exec.c", '#include "no_such_header.h"\n', "cannot resolve"),
    ("operators/sort/sort_cuda.c", "int f(void) { cudaStream_t s;\n"
     "  return cudaStreamCreateWithFlags (&s, 1); }\n", "call cudaStreamCreateWithFlags"),
    ("kernels/sort/sort_launch.cu", "void g(cudaStream_t s) { cudaStreamDestroy(s); }\n",
     "streams come only from the runtime"),
]


class CheckLayers(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="check_layers_")
        for path, text in CLEAN.items():
            self.write(path, text)

    def tearDown(self):
        shutil.rmtree(self.root)

    def write(self, path, text, mode="w"):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, mode) as fh:
            fh.write(text)

    def run_check(self, allow_text=None):
        allow = os.path.join(self.root, "allow.txt")
        if allow_text is not None:
            self.write("allow.txt", allow_text)
        out = io.StringIO()
        bad = check_layers.check(self.root, allow, out)
        return bad, out.getvalue()

    def test_clean_tree_passes(self):
        bad, report = self.run_check()
        self.assertEqual(bad, 0, report)

    def test_each_bad_edge_fails(self):
        for path, text, words in BAD:
            with self.subTest(path=path, include=text.strip()):
                self.tearDown()
                self.setUp()
                self.write(path, text, "a")
                bad, report = self.run_check()
                self.assertEqual(bad, 1, report)
                self.assertIn(path, report)
                self.assertIn(words, report)

    def test_allowlisted_edge_passes_and_stale_entry_warns(self):
        self.write("operators/join/join.c", '#include "../sort/sort_int.h"\n', "a")
        bad, report = self.run_check(
            "# debt\noperators/join/join.c -> operators/sort/sort_int.h  # dedupe\n"
            "runtime/exec.c -> operators/operators.h\n")
        self.assertEqual(bad, 0, report)
        self.assertIn("allowed (listed debt): operators/join/join.c", report)
        self.assertIn("stale allowlist entry runtime/exec.c -> operators/operators.h", report)

    def test_allowlist_does_not_cover_other_edges(self):
        self.write("operators/join/join.c", '#include "../sort/sort_int.h"\n', "a")
        bad, report = self.run_check("operators/file/scan.c -> operators/sort/sort_int.h\n")
        self.assertEqual(bad, 1, report)

    def test_bad_allowlist_line_is_an_error(self):
        with self.assertRaises(ValueError):
            self.run_check("runtime/exec.c operators/operators.h\n")

    def test_includes_in_comments_are_ignored(self):
        self.write("runtime/exec.c", '/* #include "operators.h" */\n// #include "sluice_k/sort.h"\n', "a")
        bad, report = self.run_check()
        self.assertEqual(bad, 0, report)

    def test_line_numbers_are_right(self):
        self.write("runtime/exec.c", '\n\n/* x */\n#include "operators.h"\n', "a")
        bad, report = self.run_check()
        self.assertEqual(bad, 1, report)
        line = len(CLEAN["runtime/exec.c"].splitlines()) + 4
        self.assertIn("runtime/exec.c:%d includes operators/operators.h" % line, report)


class CheckLink(unittest.TestCase):
    NM = [
        "lib.a:runtime_registry.c.o:                 U sl__builtin_ops",
        "lib.a:runtime_exec.c.o:                 U sl__plan_x",
        "lib.a:runtime_exec.c.o:                 U memcpy",
        "lib.a:runtime_plan.c.o:0000000000000010 T sl__plan_x",
        "lib.a:operators_builtin.c.o:0000000000000000 D sl__builtin_ops",
        "lib.a:operators_sort_sort.c.o:                 U sl__plan_x",
        "lib.a:operators_sort_sort.c.o:0000000000000040 T sl__sort_helper",
        "lib.a:operators_sort_sort.c.o:0000000000000080 t local_only",
        "lib.a:sort_sort_launch_cu.o:0000000000000000 T sl_k_sort",
        "lib.a:runtime_cuda_image_cu.o:0000000000000000 T sl__cuda_image_probe",
        "lib.a:runtime_cuda_cuda_device.c.o:                 U sl__cuda_image_probe",
        "lib.a:runtime_query.c.o:                 U local_only",
    ]

    def run_link(self, extra):
        out = io.StringIO()
        return check_layers.check_link("lib.a", out, self.NM + extra), out.getvalue()

    def test_registration_interface_and_runtime_symbols_pass(self):
        bad, report = self.run_link([])
        self.assertEqual(bad, 0, report)

    def test_runtime_calling_an_operator_fails(self):
        bad, report = self.run_link(["lib.a:runtime_registry.c.o:          U sl__sort_helper"])
        self.assertEqual(bad, 1, report)
        self.assertIn("runtime_registry.c.o uses sl__sort_helper from operators_sort_sort.c.o", report)

    def test_runtime_calling_a_kernel_fails(self):
        bad, report = self.run_link(["lib.a:runtime_cuda_cuda_device.c.o:          U sl_k_sort"])
        self.assertEqual(bad, 1, report)
        self.assertIn("sort_sort_launch_cu.o", report)


if __name__ == "__main__":
    unittest.main()
