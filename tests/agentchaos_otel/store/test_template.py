"""New stores are copies of a verified empty store: same layout, no partial files, safe fallbacks."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import duckdb
import pytest

from agentchaos_otel import settings
from agentchaos_otel.store.database import connect as db
from agentchaos_otel.store.database import schema, template
from agentchaos_otel.store.database.connect import connect


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv(settings.CACHE_DIR.name, str(directory))
    template.forget()
    yield directory
    template.forget()


def _layout(path: Path) -> tuple[list[tuple[str, str]], tuple[int, str, str | None]]:
    with duckdb.connect(str(path), read_only=True) as conn:
        objects = conn.execute("SELECT table_name, table_type FROM information_schema.tables "
                               "WHERE table_schema = 'main' ORDER BY table_name").fetchall()
        version = conn.execute("SELECT version, app, views_digest FROM schema_version").fetchone()
    return objects, version


def _templates(directory: Path) -> list[Path]:
    return sorted(directory.glob(f"{db._TEMPLATE_KEY}-*.duckdb"))


def test_a_new_store_is_a_copy_with_the_full_layout_and_no_view_creation(cache: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    connect(tmp_path / "first.duckdb", read_only=False).close()  # builds the template
    assert len(_templates(cache)) == 1

    def no_ddl(conn: duckdb.DuckDBPyConnection) -> None:
        raise AssertionError("views created for a store that should be a copy")

    monkeypatch.setattr(schema, "create_views", no_ddl)
    template.forget()  # from the cache file this time, not from memory
    second = tmp_path / "second.duckdb"
    with connect(second, read_only=False) as conn:
        conn.execute("INSERT INTO spans (trace_id, span_id, name) VALUES ('t', 's', 'n')")
    objects, version = _layout(second)
    assert {name for name, kind in objects if kind == "VIEW"} >= set(schema.PUBLIC_VIEWS)
    assert version == (schema.SCHEMA_VERSION, schema.STORE_APP, schema.views_digest())
    with connect(second) as conn:  # a reader finds it current: no migration
        assert conn.execute("SELECT count(*) FROM spans").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM steps").fetchone()[0] == 0
    assert _layout(tmp_path / "first.duckdb")[0] == objects
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staged copies left


def test_a_template_that_does_not_match_its_digest_is_rebuilt_not_copied(cache: Path, tmp_path: Path) -> None:
    connect(tmp_path / "a.duckdb", read_only=False).close()
    [good] = _templates(cache)
    good.write_bytes(good.read_bytes()[: 4096])  # truncated under its old name
    template.forget()
    store = tmp_path / "b.duckdb"
    connect(store, read_only=False).close()
    assert _layout(store)[1][0] == schema.SCHEMA_VERSION
    [rebuilt] = _templates(cache)  # the old one is gone: its bytes no longer match its name
    assert rebuilt.stat().st_size > 4096
    assert rebuilt.name == f"{db._TEMPLATE_KEY}-{template._digest(rebuilt.read_bytes())}.duckdb"


def test_an_unwritable_cache_still_gives_stores_from_a_template_in_memory(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    monkeypatch.setenv(settings.CACHE_DIR.name, str(blocker / "cache"))
    template.forget()
    try:
        for name in ("a.duckdb", "b.duckdb"):
            connect(tmp_path / name, read_only=False).close()
            assert _layout(tmp_path / name)[1][0] == schema.SCHEMA_VERSION
        assert db._TEMPLATE_KEY in template._bytes
    finally:
        template.forget()


def test_nothing_is_copied_over_an_existing_file_or_beside_a_write_ahead_log(cache: Path, tmp_path: Path) -> None:
    existing = tmp_path / "existing.duckdb"
    existing.write_bytes(b"someone else's bytes")
    assert not template.create_from_template(str(existing), db._TEMPLATE_KEY, db._create_empty)
    assert existing.read_bytes() == b"someone else's bytes"
    orphan = tmp_path / "orphan.duckdb"
    Path(str(orphan) + ".wal").write_bytes(b"")
    assert not template.create_from_template(str(orphan), db._TEMPLATE_KEY, db._create_empty)
    assert not orphan.exists()


def test_without_hard_links_the_copy_is_renamed_into_place(cache: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(src: str, dst: str) -> None:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "link", no_links)
    store = tmp_path / "renamed.duckdb"
    assert template.create_from_template(str(store), db._TEMPLATE_KEY, db._create_empty)
    assert _layout(store)[1][0] == schema.SCHEMA_VERSION
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "renamed.duckdb"]


def test_a_failed_copy_falls_back_to_creating_the_store(cache: Path, tmp_path: Path) -> None:
    store = tmp_path / "t.duckdb"
    staged = tmp_path / f".t.duckdb.{os.getpid()}.{threading.get_ident()}.new"
    staged.mkdir()  # the copy cannot be written
    assert not template.create_from_template(str(store), db._TEMPLATE_KEY, db._create_empty)
    assert not store.exists()
    connect(store, read_only=False).close()  # created from DDL instead
    assert _layout(store)[1][0] == schema.SCHEMA_VERSION


def test_concurrent_creators_of_one_path_share_one_store(cache: Path, tmp_path: Path) -> None:
    store = tmp_path / "shared.duckdb"
    results: list[bool] = []
    barrier = threading.Barrier(4)

    def create() -> None:
        barrier.wait()
        results.append(template.create_from_template(str(store), db._TEMPLATE_KEY, db._create_empty))

    threads = [threading.Thread(target=create) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 1
    assert _layout(store)[1][0] == schema.SCHEMA_VERSION
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "shared.duckdb"]


def test_the_template_name_follows_duckdb_and_the_layout() -> None:
    base = template.template_key(1, "CREATE TABLE a (x INT)")
    assert duckdb.__version__ in base
    assert template.template_key(1, "CREATE TABLE a (x INT)") == base
    assert template.template_key(2, "CREATE TABLE a (x INT)") != base
    assert template.template_key(1, "CREATE TABLE a (x BIGINT)") != base
