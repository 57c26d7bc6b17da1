"""Configuration: defaults documented in configs/default.yaml, errors that name key and file."""

from pathlib import Path

import pytest
import yaml

from common.config import DEFAULT_CONFIG, KilnConfig, load_config
from common.config_loader import Section, fingerprint
from common.errors import ConfigError


def _leaf_keys(model: type[Section], prefix: str = "") -> set[str]:
    keys = set()
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, Section):
            keys |= _leaf_keys(annotation, f"{prefix}{name}.")
        else:
            keys.add(f"{prefix}{name}")
    return keys


def _yaml_leaf_keys(data: dict, prefix: str = "") -> set[str]:
    keys = set()
    for key, value in data.items():
        if isinstance(value, dict) and value and key not in (
                "source_categories", "url_categories", "default_url_categories", "thresholds", "rules",
                "category_weights", "stage_resources", "scripts"):
            keys |= _yaml_leaf_keys(value, f"{prefix}{key}.")
        else:
            keys.add(f"{prefix}{key}")
    return keys


def test_default_yaml_documents_every_key_with_its_default():
    documented = yaml.safe_load(DEFAULT_CONFIG.read_text())
    assert _yaml_leaf_keys(documented) == _leaf_keys(KilnConfig)
    assert load_config() == KilnConfig()


def test_every_key_in_default_yaml_has_a_comment():
    lines = DEFAULT_CONFIG.read_text().splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and ":" in stripped and not stripped.endswith(":"):
            if line.startswith("    "):  # members of a documented mapping such as ingest.fields
                continue
            assert lines[i - 1].strip().startswith("#"), f"configs/default.yaml line {i + 1} has no comment: {line}"


def test_unknown_key_names_the_key_and_the_file(tmp_path: Path):
    user = tmp_path / "mine.yaml"
    user.write_text("ingest:\n  shard_size: 10\n")
    with pytest.raises(ConfigError) as err:
        load_config([user])
    assert "ingest.shard_size" in str(err.value)
    assert str(user) in str(err.value)
    assert "unknown key" in str(err.value)


def test_bad_value_names_the_key_and_the_file(tmp_path: Path):
    user = tmp_path / "bad.yaml"
    user.write_text("ingest:\n  batch_rows: many\n  max_doc_bytes: -5\n")
    with pytest.raises(ConfigError) as err:
        load_config([user])
    message = str(err.value)
    assert f"{user}: ingest.batch_rows" in message
    assert f"{user}: ingest.max_doc_bytes" in message


NONSENSE = {
    "a negative language threshold": ("clean:\n  lid:\n    thresholds: {en: -0.2}\n", "clean.lid.thresholds.en",
                                      "greater than or equal to 0"),
    "a language threshold above 1": ("clean:\n  lid:\n    thresholds: {zh: 1.5}\n", "clean.lid.thresholds.zh",
                                     "less than or equal to 1"),
    "a negative category weight": ("mix:\n  category_weights: {news: -1}\n", "mix.category_weights.news",
                                   "greater than or equal to 0"),
    "every category weight zero": ("mix:\n  category_weights: {academic: 0, tech_docs: 0, encyclopedia: 0, news: 0,"
                                   " literature: 0, dialogue: 0}\n", "mix.category_weights", "at least one category"),
    "an empty text field": ("ingest:\n  fields: {text: ''}\n", "ingest.fields.text", "at least 1 character"),
    "a rule on an unknown signal": ("clean:\n  rules:\n    too_short: {signal: q_nothing}\n",
                                    "clean.rules.too_short.signal", "unknown signal 'q_nothing'"),
    "a rule whose min is above its max": ("clean:\n  rules:\n    too_short: {max: {'*': 5}}\n",
                                          "clean.rules.too_short", "min 20 is above max 5"),
    "an unknown dedup quality column": ("dedup:\n  quality_signal: score\n", "dedup.quality_signal",
                                        "unknown signal 'score'"),
    "an unknown mix token column": ("mix:\n  token_column: tokens\n", "mix.token_column", "unknown signal 'tokens'"),
    "a section given as a number": ("ingest: 5\n", "ingest", "valid dictionary"),
}


@pytest.mark.parametrize("case", NONSENSE, ids=list(NONSENSE))
def test_values_that_make_no_sense_are_refused_at_load_naming_key_and_file(tmp_path: Path, case: str):
    text, key, problem = NONSENSE[case]
    user = tmp_path / "mine.yaml"
    user.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config([user])
    line = next(line for line in str(err.value).splitlines() if f": {key}: " in line)
    assert str(user) in line and problem in line


def test_a_section_given_as_a_number_is_not_replaced_by_an_override(tmp_path: Path):
    user = tmp_path / "mine.yaml"
    user.write_text("ingest: 5\n")
    with pytest.raises(ConfigError) as err:
        load_config([user], ['ingest.input=["corpus/"]'])
    assert f"{user}: ingest: expected a mapping of keys, got 5" in str(err.value)


def test_unknown_category_in_source_mapping_is_refused(tmp_path: Path):
    user = tmp_path / "cats.yaml"
    user.write_text("ingest:\n  source_categories:\n    wiki: sports\n")
    with pytest.raises(ConfigError, match="sports"):
        load_config([user])


def test_layers_and_overrides_apply_in_order(tmp_path: Path):
    user = tmp_path / "mine.yaml"
    user.write_text("ingest:\n  batch_rows: 100\n  fields:\n    text: content\n")
    cfg = load_config([user], ["ingest.batch_rows=7"])
    assert cfg.ingest.batch_rows == 7
    assert cfg.ingest.fields.text == "content"
    assert cfg.ingest.fields.id == "id"  # untouched siblings keep their defaults


def test_bad_override_is_named():
    with pytest.raises(ConfigError, match="--set ingest.batch_rows=x"):
        load_config([], ["ingest.batch_rows=x"])
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        load_config([], ["ingest.batch_rows"])


def test_missing_and_malformed_files_are_clear(tmp_path: Path):
    with pytest.raises(ConfigError, match="not found"):
        load_config([tmp_path / "absent.yaml"])
    broken = tmp_path / "broken.yaml"
    broken.write_text("ingest: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config([broken])


def test_fingerprint_depends_on_content_only():
    assert fingerprint({"a": 1, "b": [1, 2]}) == fingerprint({"b": [1, 2], "a": 1})
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})
