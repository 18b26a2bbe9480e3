"""The nvinterpose pytest plugin: the runtime in a test run, and its findings in the test summary.

Off unless asked: `pytest --nvinterpose`, or `nvinterpose = true` in the ini file. Importing this
module attaches nothing (it is not inside the nvinterpose package, whose import attaches the
runtime); pytest loads it through the `pytest11` entry point, or `-p nvinterpose_pytest` when
plugin autoloading is off (PYTEST_DISABLE_PLUGIN_AUTOLOAD).

Asked, it attaches the runtime at pytest_load_initial_conftests, before any conftest.py or test
module is imported, and writes a "nvinterpose" section in the terminal summary: the folders
registered by family, what the runtime supplied to whom, and each miss with the places looked in,
gathered from every pytest-xdist worker (each attaches its own). `--nvinterpose-strict` (ini
`nvinterpose_strict = true`) fails the session when the runtime recorded a miss at warning level.
See docs/pytest.md.
"""

import os

import pytest

_PLUGIN_NAME = "nvinterpose-session"


def pytest_addoption(parser):
    group = parser.getgroup("nvinterpose", "nvinterpose: NVIDIA libraries find their dependents")
    group.addoption("--nvinterpose", action="store_true", default=False,
                    help="attach the nvinterpose runtime before conftest and test modules are imported, and report "
                         "what it did in the test summary (ini: nvinterpose = true)")
    group.addoption("--nvinterpose-strict", action="store_true", default=False,
                    help="with the runtime attached, fail the session when it recorded a miss at warning level "
                         "(ini: nvinterpose_strict = true)")
    parser.addini("nvinterpose", type="bool", default=False, help="attach the nvinterpose runtime (as --nvinterpose)")
    parser.addini("nvinterpose_strict", type="bool", default=False,
                  help="fail the session on a miss at warning level (as --nvinterpose-strict)")


def _asked(config, name):
    return bool(getattr(config.known_args_namespace, name, False) or config.getini(name))


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    if not _asked(early_config, "nvinterpose") or early_config.pluginmanager.has_plugin(_PLUGIN_NAME):
        return
    # The report's lines are kept, and printed by no process, in this process and in those it
    # starts (pytest-xdist's workers), unless a report was asked for already.
    os.environ.setdefault("NVINTERPOSE_REPORT", "keep")
    import nvinterpose  # attaches the runtime, or uses the one the process has

    early_config.pluginmanager.register(_Session(early_config, nvinterpose), _PLUGIN_NAME)


def _process_findings(nvinterpose, name):
    """What this process's runtime knows, as plain data (it crosses pytest-xdist's channel)."""
    report = nvinterpose.report()
    return {
        "process": name,
        "pid": os.getpid(),
        "runtime": nvinterpose.runtime_path(),
        "version": nvinterpose.version(),
        "preloaded": nvinterpose._found_in_process,
        "totals": report.totals,
        "kept": report.kept,
        "left_out": report.left_out,
        "entries": [dict(entry._asdict()) for entry in report.origins + report.supplied + report.misses + report.mixed_origins],
    }


def _seen_in(findings, processes):
    """The processes a line of the summary was seen in, when more than one process reported."""
    return " [%s]" % ", ".join(processes) if len(findings) > 1 else ""


class _Session:
    """The plugin at work in one pytest process: the main one, or a pytest-xdist worker."""

    def __init__(self, config, nvinterpose):
        self.config = config
        self.nvinterpose = nvinterpose
        self.strict = _asked(config, "nvinterpose_strict")
        self.findings = []      # one dict a process that reported
        self.lost_workers = []  # (worker id, why) of workers that ended before reporting
        self.warning_misses = 0

    def pytest_sessionfinish(self, session):
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # a pytest-xdist worker: the main process reports
            workeroutput["nvinterpose"] = _process_findings(self.nvinterpose, os.environ.get("PYTEST_XDIST_WORKER", "worker"))
            return
        self.findings.insert(0, _process_findings(self.nvinterpose, "pytest"))
        self.warning_misses = sum(
            entry["times"]
            for process in self.findings
            for entry in process["entries"]
            if entry["kind"] == "miss" and entry["warning"]
        )
        # A miss with no line (not kept, or past the report's store) has no known level: it counts.
        for process in self.findings:
            if process["totals"]:
                listed = sum(entry["times"] for entry in process["entries"] if entry["kind"] == "miss")
                self.warning_misses += max(process["totals"]["misses"] - listed, 0)
        if self.strict and self.warning_misses and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        output = getattr(node, "workeroutput", None) or {}
        worker = node.gateway.id
        if "nvinterpose" in output:
            self.findings.append(output["nvinterpose"])
        else:
            self.lost_workers.append((worker, str(error).strip() if error else "no findings sent"))

    def pytest_terminal_summary(self, terminalreporter):
        if getattr(self.config, "workeroutput", None) is not None:
            return
        write = terminalreporter.write_line
        terminalreporter.write_sep("=", "nvinterpose")
        for process in self.findings:
            totals = process["totals"] or {}
            write("%s (process %d): runtime %s %s from %s; %s origins registered, %s supplied, %s misses, %s mixed origins" % (
                process["process"], process["pid"], process["version"], "preloaded" if process["preloaded"] else "attached",
                process["runtime"], totals.get("origins", "?"), totals.get("supplied", "?"), totals.get("misses", "?"),
                totals.get("mixed_origins", "?")))
            if not process["kept"]:
                write("  its lines are not kept: NVINTERPOSE_REPORT was not set when its runtime started "
                      "(set it to keep, or to a pid, before the run)")
            if process["left_out"]:
                write("  %d more lines left out (the report's store is full)" % process["left_out"])
        for worker, why in self.lost_workers:
            write("worker %s ended before reporting (%s): its findings are missing" % (worker, why))
        self._write_lines(write)
        if self.warning_misses:
            write("%d misses at warning level%s" % (
                self.warning_misses, ": the session fails (--nvinterpose-strict)" if self.strict else ""))

    def _gathered(self, kind, key):
        """The entries of a kind from every process, one a key, with the processes that had it,
        a miss's times summed."""
        gathered = {}
        for process in self.findings:
            for entry in process["entries"]:
                if entry["kind"] != kind:
                    continue
                known = gathered.setdefault(key(entry), (dict(entry, times=0), []))
                known[0]["times"] += entry["times"]
                known[1].append(process["process"])
        return list(gathered.values())

    def _write_lines(self, write):
        origins = self._gathered("origin", lambda e: (e["family"], e["path"]))
        if origins:
            write("folders registered:")
            families = {}
            for entry, seen in origins:
                families.setdefault(entry["family"], []).append("%s%s" % (entry["path"], _seen_in(self.findings, seen)))
            for family, folders in families.items():
                write("  %s: %s" % (family, ", ".join(folders)))
        supplied = self._gathered("supplied", lambda e: (e["name"], e["asker"], e["path"]))
        if supplied:
            write("supplied:")
            for entry, seen in supplied:
                write("  %s to %s: %s (%s, %s)%s" % (entry["name"], entry["asker"] or "an unknown object", entry["path"],
                                                   entry["event"], entry["reason"], _seen_in(self.findings, seen)))
        misses = self._gathered("miss", lambda e: (e["name"], e["asker"]))
        if misses:
            write("missed:")
            for entry, seen in misses:
                write("  %s wanted by %s (%s%s): %d times%s; looked in %d places%s" % (
                    entry["name"], entry["asker"] or "an unknown object", entry["reason"],
                    "" if entry["warning"] else ", said at info", entry["times"], _seen_in(self.findings, seen),
                    entry["place_count"], ":" if entry["places"] else ""))
                for place in entry["places"]:
                    write("    %s" % place)
        mixed = self._gathered("mixed-origin", lambda e: (e["name"], e["path"], e["own"]))
        if mixed:
            write("mixed origins:")
            for entry, seen in mixed:
                write("  %s loaded from %s; %s would take %s%s" % (entry["name"], entry["path"], entry["asker"], entry["own"],
                                                                 _seen_in(self.findings, seen)))
