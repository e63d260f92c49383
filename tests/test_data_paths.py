"""Files named by data: the checks every reader of a data file's path goes through."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from metaeval.data_paths import checked_name, file_digest, inside_root, read_bounded
from metaeval.errors import InputError


@pytest.mark.parametrize("name", ["/etc/passwd", "../x.py", "a/../../x.py", "", "a\0b"])
def test_a_name_leaving_its_directory_by_its_text_is_refused(name: str) -> None:
    with pytest.raises(InputError, match=r"^f\.json: findings\[2\]\.path: got "):
        checked_name(name, "f.json: findings[2].path")


@pytest.mark.parametrize("name", ["x.py", "src/shop/x.py", "./x.py", "a/b/..c.py"])
def test_a_relative_name_inside_is_kept(name: str) -> None:
    assert checked_name(name, "w") == name


def test_inside_root_resolves_links_and_refuses_one_leading_out(tmp_path: Path) -> None:
    (tmp_path / "root" / "src").mkdir(parents=True)
    (tmp_path / "root" / "src" / "a.py").write_text("a = 1\n", encoding="utf-8")
    (tmp_path / "root" / "inner.py").symlink_to(tmp_path / "root" / "src" / "a.py")
    (tmp_path / "root" / "out").symlink_to(tmp_path)
    (tmp_path / "secret.py").write_text("token = 1\n", encoding="utf-8")
    root = tmp_path / "root"
    assert inside_root(root, "inner.py", "w") == (root / "src" / "a.py").resolve()
    with pytest.raises(InputError, match="expected a path inside the repository"):
        inside_root(root, "out/secret.py", "w")


def test_read_bounded_reads_a_regular_file_up_to_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"12345")
    assert read_bounded(path, 5, "w") == b"12345"
    with pytest.raises(InputError, match=r"^w: .*holds 5 bytes; expected at most 4$"):
        read_bounded(path, 4, "w")
    with pytest.raises(FileNotFoundError):
        read_bounded(tmp_path / "gone.py", 5, "w")


def test_read_bounded_never_reads_a_device_a_fifo_a_directory_or_a_link(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "link").symlink_to(tmp_path / "pipe")
    for path, kind in [(Path("/dev/zero"), "a character device"), (tmp_path, "a directory"),
                       (tmp_path / "pipe", "a fifo"), (tmp_path / "link", "a symbolic link")]:
        with pytest.raises(InputError, match=kind):
            read_bounded(path, 100, "w")


def test_file_digest_hashes_regular_files_inside_and_outside_by_absolute_name(
        tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "a.py").write_bytes(b"a")
    (tmp_path / "lib.py").write_bytes(b"lib")
    root = tmp_path / "root"
    assert file_digest(root, "a.py", "w") == hashlib.sha256(b"a").hexdigest()
    # metaeval records a file outside the project its tests ran by its absolute path
    assert file_digest(root, str(tmp_path / "lib.py"), "w") == hashlib.sha256(b"lib").hexdigest()
    assert file_digest(root, "gone.py", "w") == "missing"


@pytest.mark.parametrize("name", ["/dev/zero", "../lib.py", "zero.py"])
def test_file_digest_refuses_a_special_file_and_a_name_climbing_out(tmp_path: Path,
                                                                    name: str) -> None:
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    with pytest.raises(InputError, match=r"^cache: deps: "):
        file_digest(tmp_path, name, "cache: deps")
