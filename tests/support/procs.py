"""The process harness moved to ``app.harness`` (one harness for tests and bench); import it from there.

This name stays only so a test written against the old path still runs."""

from app.harness import REPO, NodeProc, TinyProc, child_env, read_json_line, stop_process, wait_until

__all__ = ["REPO", "NodeProc", "TinyProc", "child_env", "read_json_line", "stop_process", "wait_until"]
