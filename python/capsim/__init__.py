"""capsim from Python: scenarios loaded, edited and evaluated in process by
libcapsim, the installed C library (capsim.h), through ctypes.

    s = capsim.load("h100-8node-ndr")      # a file, or a shipped scenario's name
    s.set("workload.parallelism.pp", 2)    # capsim run --set's edit, checked the same way
    r = s.evaluate()                       # capsim run --json's keys, bands included
    r["step_time_s"], r.units["step_time_s"], r.band("step_time_s", 95)

Nothing of capsim is implemented here: every number comes from the library,
and errors raise capsim.Error (InputError, RunFailure, UsageError) carrying
capsim's own diagnostics.
"""

import json

from ._lib import Error, InputError, LibraryNotFound, RunFailure, UsageError, library

__all__ = [
    "Error", "InputError", "RunFailure", "UsageError", "LibraryNotFound",
    "Scenario", "Result", "load", "collective", "run_sweep", "sweep", "query",
    "result_keys", "version", "data_dir",
]

__version__ = "0.1.0"

NO_INTERVALS = 1  # capsim.h's CAPSIM_NO_INTERVALS


def version():
    """libcapsim's version, "MAJOR.MINOR.PATCH (git REV)"."""
    lib = library()
    return lib.capsim_library_version(None, None, None).decode()


def data_dir():
    """The catalog's directory libcapsim reads (hardware/, models/,
    scenarios/ with its sweeps/): CAPSIM_DATA where set, else the one
    installed beside the library."""
    return library().capsim_data_dir().decode()


def result_keys():
    """Every key of the result table, in the order capsim run --json writes
    them: a list of dicts with key, unit, kind ("number", "integer",
    "boolean", "text", "structured"), banded and description."""
    lib = library()
    kinds = ["number", "integer", "boolean", "text", "structured"]
    out = []
    for i in range(lib.capsim_key_count()):
        name = lib.capsim_key_name(i)
        out.append({
            "key": name.decode(),
            "unit": lib.capsim_key_unit(name).decode(),
            "kind": kinds[lib.capsim_key_kind(name)],
            "banded": bool(lib.capsim_key_banded(name)),
            "description": lib.capsim_key_description(name).decode(),
        })
    return out


_unit_table = None


def _units():
    """key -> unit of the result table, read once"""
    global _unit_table
    if _unit_table is None:
        _unit_table = {k["key"]: k["unit"] for k in result_keys()}
    return _unit_table


def _text(value):
    """A --set value as text: booleans as true/false, numbers as Python
    writes them, anything else as str()."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Result(dict):
    """An evaluated scenario: a dict of capsim run --json's keys (numbers as
    int or float, each banded key followed by KEY_lo, KEY_hi, KEY_lo95,
    KEY_hi95), with units (key -> unit of the result table) and band()."""

    def __init__(self, text):
        super().__init__(json.loads(text))
        self.json = text
        table = _units()
        self.units = {k: table[k] for k in self if k in table}

    def band(self, key, level=80):
        """(lo, hi) of key's band at level 80 or 95, or None where the
        result has none."""
        if level not in (80, 95):
            raise UsageError(3, "capsim: band: expected level 80 or 95, found %r" % (level,))
        suffix = "" if level == 80 else "95"
        lo, hi = key + "_lo" + suffix, key + "_hi" + suffix
        return (self[lo], self[hi]) if lo in self and hi in self else None


class Scenario:
    """A scenario loaded by libcapsim, with its catalog: edit it with set(),
    evaluate it with evaluate(). One thread at a time per Scenario; separate
    Scenarios may be used from separate threads."""

    def __init__(self, path=None):
        self._lib = library()
        self._h = self._lib.capsim_scn_new()
        if not self._h:
            raise MemoryError("capsim: out of memory")
        self._check(self._lib.capsim_scn_load(self._h, _bytes(path)))
        self.path = path

    def _check(self, status):
        if status != 0:
            raise Error.of(status, self._lib.capsim_scn_diagnostics(self._h).decode())

    def set(self, path, value):
        """Edit the scenario as capsim run --set PATH=VALUE does; the
        scenario is checked again, and left as it was where the edit is
        refused (InputError with capsim's diagnostics). Returns self."""
        self._check(self._lib.capsim_scn_set(self._h, _bytes(path), _bytes(_text(value))))
        return self

    def set_many(self, edits):
        """Several edits made together, all or none, for values consistent
        only together (cluster.nodes with workload.global-batch): edits is a
        dict or a list of (path, value). Returns self."""
        pairs = list(edits.items()) if isinstance(edits, dict) else list(edits)
        n = len(pairs)
        paths = (self._lib.c_char_p * n)(*[_bytes(p) for p, _ in pairs])
        values = (self._lib.c_char_p * n)(*[_bytes(_text(v)) for _, v in pairs])
        self._check(self._lib.capsim_scn_set_many(self._h, paths, values, n))
        return self

    def evaluate(self, intervals=True):
        """capsim run's evaluation, as a Result (a dict of the --json keys);
        intervals=False as --no-intervals."""
        res = self._lib.res_p()
        self._check(self._lib.capsim_scn_evaluate(self._h, 0 if intervals else NO_INTERVALS,
                                                  self._lib.byref(res)))
        try:
            return Result(self._lib.take_text(self._lib.capsim_res_json, res))
        finally:
            self._lib.capsim_res_free(res)

    def collective(self, op, bytes, ranks=0):
        """One NCCL collective (op "all-reduce", "all-to-all", ...) of bytes
        over the first ranks GPUs (0: every GPU), as capsim collective
        --json --no-intervals prints it: a dict."""
        out = self._lib.c_void_p()
        self._check(self._lib.capsim_scn_collective(self._h, _bytes(op), float(bytes),
                                                    int(ranks), self._lib.byref(out)))
        return json.loads(self._lib.string_of(out))

    def xml(self):
        """The scenario as capsim validate --resolved writes it."""
        out = self._lib.c_void_p()
        self._check(self._lib.capsim_scn_xml(self._h, self._lib.byref(out)))
        return self._lib.string_of(out)

    def close(self):
        if getattr(self, "_h", None):
            self._lib.capsim_scn_free(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


def _bytes(s):
    return None if s is None else str(s).encode()


def load(path=None):
    """A Scenario from path, a shipped scenario's name ("h100-8node-ndr"),
    or None for the default scenario."""
    return Scenario(path)


def collective(scenario, op, bytes, ranks=0):
    """One collective on a scenario's cluster: scenario is a Scenario, a
    path or a shipped scenario's name. As Scenario.collective."""
    if isinstance(scenario, Scenario):
        return scenario.collective(op, bytes, ranks)
    with Scenario(scenario) as s:
        return s.collective(op, bytes, ranks)


def _call_out(fn, *args):
    """fn(*args, &out) of the functions without a handle: the text, or the
    Error with the diagnostics out holds."""
    lib = library()
    out = lib.c_void_p()
    status = fn(*args, lib.byref(out))
    text = lib.string_of(out)
    if status != 0:
        raise Error.of(status, text)
    return text


def run_sweep(sweep_file, db, threads=1, intervals=True):
    """capsim sweep SWEEP_FILE --db DB -j THREADS: the sweep's points run
    into the results store; a dict of what it did (sweep, sweep_id,
    points, planned, ok, failed, dropped)."""
    lib = library()
    return json.loads(_call_out(lib.capsim_run_sweep, _bytes(sweep_file), _bytes(db),
                                int(threads), 0 if intervals else NO_INTERVALS))


def sweep(sweep_file, db, threads=1, intervals=True):
    """run_sweep, then the sweep's points as rows (query)."""
    done = run_sweep(sweep_file, db, threads, intervals)
    return query(db, str(done["sweep_id"]))


def query(db, sweep=None, where=()):
    """The points of one sweep of the store db (sweep: its name or id;
    None the latest) that pass every filter of where ("KEY OP VALUE", as
    capsim query --where), as a list of dicts (index, status, error where
    it failed, each parameter by its --set path, each result key): rows
    that pandas.DataFrame(rows) takes as they are."""
    lib = library()
    where = [where] if isinstance(where, str) else list(where)
    arr = (lib.c_char_p * max(len(where), 1))(*[_bytes(w) for w in where])
    return json.loads(_call_out(lib.capsim_query, _bytes(db), _bytes(sweep), arr, len(where)))
