"""The Python package against the installed capsim: the same numbers as the
installed command (capsim run, collective, query --json), errors raised with
capsim's diagnostics, separate scenarios on separate threads, and libcapsim
not found said clearly. Run by tests/scripts/python_pkg.sh with
CAPSIM_TEST_PREFIX (the installed prefix), CAPSIM_TEST_SOURCE (the source
tree, for its test sweep) and CAPSIM_TEST_WORK (a scratch directory)."""

import json
import os
import subprocess
import sys
import threading
import unittest

import capsim

PREFIX = os.environ["CAPSIM_TEST_PREFIX"]
SOURCE = os.environ["CAPSIM_TEST_SOURCE"]
WORK = os.environ["CAPSIM_TEST_WORK"]
CLI = os.path.join(PREFIX, "bin", "capsim")
SCENARIO = os.path.join(PREFIX, "share", "capsim", "scenarios", "h100-8node-ndr.xml")
EDITS = [("workload.parallelism.pp", 2), ("cluster.nodes", 16)]


def cli(*args, status=0):
    """the installed capsim's standard output and error, its status checked
    (without the interpreter's preloaded sanitizer runtime, which a
    sanitizer build's command carries itself)"""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    p = subprocess.run([CLI, *args], capture_output=True, text=True, check=False, env=env)
    if p.returncode != status:
        raise AssertionError("capsim %s exited %d, not %d: %s" %
                             (" ".join(args), p.returncode, status, p.stderr))
    return p.stdout, p.stderr


def sets(edits):
    out = []
    for path, value in edits:
        out += ["--set", "%s=%s" % (path, value)]
    return out


def edited(edits=EDITS):
    s = capsim.load(SCENARIO)
    for path, value in edits:
        s.set(path, value)
    return s


class Evaluate(unittest.TestCase):
    def test_same_numbers_as_capsim_run(self):
        r = edited().evaluate()
        text, _ = cli("run", SCENARIO, *sets(EDITS), "--json")
        self.assertEqual(dict(r), json.loads(text))
        self.assertEqual(r.json, text)
        # the bands are there, as --json names them, and band() reads them
        self.assertLess(r["step_time_s_lo95"], r["step_time_s_lo"])
        self.assertLess(r["step_time_s_lo"], r["step_time_s"])
        self.assertLess(r["step_time_s"], r["step_time_s_hi"])
        self.assertEqual(r.band("step_time_s", 95), (r["step_time_s_lo95"],
                                                      r["step_time_s_hi95"]))
        self.assertIsInstance(r["gpus"], int)
        self.assertIsInstance(r["step_time_s"], float)
        self.assertIs(r["fits_in_memory"], True)

    def test_no_intervals_as_the_command(self):
        r = edited().evaluate(intervals=False)
        text, _ = cli("run", SCENARIO, *sets(EDITS), "--json", "--no-intervals")
        self.assertEqual(dict(r), json.loads(text))
        self.assertNotIn("step_time_s_lo", r)
        self.assertIsNone(r.band("step_time_s"))

    def test_units_from_the_result_table(self):
        r = edited().evaluate()
        keys = {k["key"]: k for k in capsim.result_keys()}
        self.assertEqual(r.units["step_time_s"], "s")
        self.assertEqual(keys["step_time_s"]["kind"], "number")
        self.assertTrue(keys["step_time_s"]["banded"])
        self.assertEqual(keys["memory_verdict"]["kind"], "text")
        # every result key of the dict is the table's, with its unit
        for k in r.units:
            self.assertEqual(r.units[k], keys[k]["unit"])
        self.assertGreater(len(r.units), 100)

    def test_an_edit_is_seen(self):
        s = capsim.load(SCENARIO)
        before = s.evaluate(intervals=False)["step_time_s"]
        s.set("workload.parallelism.pp", 2)
        self.assertNotEqual(s.evaluate(intervals=False)["step_time_s"], before)

    def test_edits_together(self):
        edits = {"cluster.nodes": 16, "workload.global-batch": 2048}
        r = capsim.load(SCENARIO).set_many(edits).evaluate(intervals=False)
        text, _ = cli("run", SCENARIO, *sets(edits.items()), "--json", "--no-intervals")
        self.assertEqual(dict(r), json.loads(text))

    def test_resolved_xml_as_capsim_validate(self):
        s = edited()
        text, _ = cli("validate", SCENARIO, *sets(EDITS), "--resolved")
        self.assertEqual(s.xml(), text)
        # written out and loaded back, it evaluates to the same numbers
        path = os.path.join(WORK, "resolved.xml")
        with open(path, "w") as f:
            f.write(s.xml())
        again = capsim.load(path).evaluate()
        self.assertEqual(again["step_time_s"], s.evaluate()["step_time_s"])

    def test_separate_scenarios_on_separate_threads(self):
        want = edited().evaluate()
        got = [None] * 4

        def work(i):
            got[i] = edited().evaluate()

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(got))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for r in got:
            self.assertEqual(dict(r), dict(want))


class Errors(unittest.TestCase):
    def test_a_refused_edit_raises_with_the_diagnostics(self):
        s = edited()
        want = s.evaluate()
        with self.assertRaises(capsim.InputError) as e:
            s.set("cluster.nodes", "many")
        _, err = cli("run", SCENARIO, "--set", "cluster.nodes=many", status=2)
        self.assertEqual(e.exception.status, 2)
        self.assertIn("cluster.nodes", e.exception.diagnostics)
        self.assertIn("found 'many'", e.exception.diagnostics)
        self.assertIn(e.exception.diagnostics.strip(), err)
        # the scenario is as it was
        self.assertEqual(dict(s.evaluate()), dict(want))

    def test_an_unknown_path_names_the_nearest(self):
        with self.assertRaises(capsim.InputError) as e:
            capsim.load(SCENARIO).set("cluster.node", "4")
        self.assertIn("cluster.node", str(e.exception))

    def test_a_missing_file(self):
        missing = os.path.join(WORK, "no-such-scenario.xml")
        with self.assertRaises(capsim.InputError) as e:
            capsim.load(missing)
        self.assertIn(missing, e.exception.diagnostics)
        self.assertIsInstance(e.exception, capsim.Error)

    def test_a_store_that_is_not_there(self):
        with self.assertRaises(capsim.Error) as e:
            capsim.query(os.path.join(WORK, "none.sqlite"))
        self.assertIn("none.sqlite", str(e.exception))

    def test_library_not_found_says_what_it_tried(self):
        env = dict(os.environ, CAPSIM_LIBRARY=os.path.join(WORK, "nowhere", "libcapsim.so.0"),
                   PKG_CONFIG_LIBDIR=os.path.join(WORK, "nowhere"))
        env.pop("LD_LIBRARY_PATH", None)
        p = subprocess.run([sys.executable, "-c",
                            "import capsim\n"
                            "try:\n"
                            "    capsim.version()\n"
                            "except capsim.LibraryNotFound as e:\n"
                            "    print(e)\n"],
                           capture_output=True, text=True, env=env, check=True)
        self.assertIn("cannot load libcapsim", p.stdout)
        self.assertIn("CAPSIM_LIBRARY", p.stdout)
        self.assertIn("pkg-config", p.stdout)


class Collectives(unittest.TestCase):
    def test_same_as_capsim_collective(self):
        got = capsim.collective(SCENARIO, "all-reduce", 1 << 30, ranks=16)
        text, _ = cli("collective", SCENARIO, "--op", "all-reduce", "--bytes", "1GiB",
                      "--ranks", "16", "--json", "--no-intervals")
        self.assertEqual(got, json.loads(text))
        self.assertGreater(got["busbw_gb_per_s"], 0)

    def test_a_bad_op(self):
        with self.assertRaises(capsim.InputError) as e:
            capsim.collective(SCENARIO, "all-sum", 1024)
        self.assertIn("all-sum", str(e.exception))


class Sweeps(unittest.TestCase):
    def test_rows_as_capsim_query(self):
        db = os.path.join(WORK, "sweep.sqlite")
        sweep = os.path.join(SOURCE, "tests", "data", "sweep", "expand.xml")
        rows = capsim.sweep(sweep, db, threads=2)
        text, _ = cli("query", "--db", db, "--json")
        points = json.loads(text)["points"]
        self.assertEqual(len(rows), len(points))
        self.assertEqual(len(rows), 6)
        for row, point in zip(rows, points):
            self.assertEqual(row["index"], point["index"])
            self.assertEqual(row["status"], "ok")
            for key, value in point["results"].items():
                self.assertAlmostEqual(row[key], value, delta=abs(value) * 1e-12, msg=key)
        # each point's numbers are capsim run's of the same edits
        first = {k: v for k, v in rows[0].items() if "." in k}
        r = capsim.load(os.path.join(SOURCE, "tests", "data", "sweep", "..", "..", "..",
                                     "scenarios", "gpt2-124m-1xh200.xml"))
        self.assertTrue(first)
        r.set("reliability.runs", 0)  # the sweep file's own edit
        for path, value in first.items():
            r.set(path, value)
        self.assertAlmostEqual(r.evaluate()["step_time_s"], rows[0]["step_time_s"],
                               delta=rows[0]["step_time_s"] * 1e-9)
        # filtered as capsim query --where
        some = capsim.query(db, where=["step_time_s < %r" % rows[0]["step_time_s"]])
        self.assertEqual(len(some), sum(1 for x in rows if x["step_time_s"] <
                                        rows[0]["step_time_s"]))

    def test_a_bad_filter(self):
        db = os.path.join(WORK, "sweep.sqlite")
        capsim.run_sweep(os.path.join(SOURCE, "tests", "data", "sweep", "expand.xml"), db)
        with self.assertRaises(capsim.InputError) as e:
            capsim.query(db, where="step_tme_s < 3")
        self.assertIn("nearest: step_time_s", str(e.exception))


class Version(unittest.TestCase):
    def test_versions(self):
        out, _ = cli("--version")
        self.assertIn(capsim.version(), out)
        self.assertTrue(capsim.version().startswith(capsim.__version__))


if __name__ == "__main__":
    unittest.main()
