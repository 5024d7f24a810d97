"""`rented apply` of a UTF-8 YAML whose comment and GPU name are not ASCII, on a locale whose
encoding is not UTF-8 (issue 28, item 5: cp1252 cannot decode "Á", so Windows raised
``UnicodeDecodeError`` while reading the file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.platform.test_non_ascii_output import CODE_PAGE

DECLARATION = """\
# Árvíztűrő tükörfúrógép: the GPU box in the office ("Á" is C3 81 in UTF-8, undefined in cp1252)
rented_node:
  name: gpu
  provider: openai-compatible
  url: {url}
  ca_file: {ca_file}
  models: [rented-model]
  gpu: 1× A100 80 GB
  price_per_hour: 2.5
"""


def test_apply_a_utf8_yaml_with_non_ascii_text_on_a_non_utf8_locale(
        node_factory: Any, tls_tiny_factory: Any, tmp_path: Path) -> None:
    tiny = tls_tiny_factory("--model", "rented-model")
    node = node_factory("A", env=CODE_PAGE).start()
    declaration = tmp_path / "gpu.yaml"
    declaration.write_bytes(DECLARATION.format(url=tiny.url, ca_file=tiny.ca_file).encode("utf-8"))
    out = node.cli("rented", "apply", str(declaration)).stdout
    assert "rented node gpu" in out and "models: rented-model" in out
    assert node.cli_json("rented", "show", "gpu")["gpu"] == "1× A100 80 GB"
