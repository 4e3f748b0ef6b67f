"""Safe writes (issue #12, case 7): links, devices, FIFOs, owner, mode, hard links, umask.

The rules are in kubectl_dynamo/files.py and docs/generate-upgrade.md ("Writing files")."""

from __future__ import annotations

import os
import stat

import pytest

from kubectl_dynamo.errors import InputError
from kubectl_dynamo.inputs.files import atomic_write, write_new_file, write_with_backup
from tests.conftest import REPO, run_cli

ALPHA = REPO / "tests" / "data" / "upgrade" / "commented-v1alpha1.yaml"
GENERATE = ("generate", "dgd", "t", "--backend", "vllm", "--model", "m")


def test_new_file_honours_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        write_new_file(str(tmp_path / "a.yaml"), "x: 1\n", force=False)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "a.yaml").st_mode) == 0o640


def test_existing_entry_needs_force_even_a_dangling_link(tmp_path):
    link = tmp_path / "out.yaml"
    link.symlink_to(tmp_path / "missing.yaml")
    with pytest.raises(InputError, match="exists; use --force"):
        write_new_file(str(link), "x: 1\n", force=False)
    with pytest.raises(InputError, match="does not exist"):  # --force does not create the link's target
        write_new_file(str(link), "x: 1\n", force=True)
    assert link.is_symlink() and not (tmp_path / "missing.yaml").exists()


@pytest.mark.parametrize("kind", ["chardev", "fifo", "directory"])
def test_non_regular_files_are_refused_even_with_force(tmp_path, kind):
    if kind == "chardev":
        path = "/dev/null"
    elif kind == "fifo":
        path = str(tmp_path / "fifo")
        os.mkfifo(path)
    else:
        path = str(tmp_path)
    before = os.lstat(path)
    proc = run_cli(*GENERATE, "--file", path, "--force")
    assert proc.returncode == 2 and "not a regular file" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    after = os.lstat(path)
    assert (after.st_ino, stat.S_IFMT(after.st_mode)) == (before.st_ino, stat.S_IFMT(before.st_mode))


def test_write_through_a_symlink_keeps_the_link(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    target = real / "deploy.yaml"
    target.write_text(ALPHA.read_text())
    link = tmp_path / "deploy.yaml"
    link.symlink_to(target)
    proc = run_cli("upgrade", "dgd", "-f", str(link), "--write")
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert "nvidia.com/v1beta1" in target.read_text()
    assert (tmp_path / "deploy.yaml.bak").read_text() == ALPHA.read_text()  # the backup sits next to the link


def test_write_keeps_mode_owner_and_hard_links(tmp_path):
    path = tmp_path / "deploy.yaml"
    path.write_text(ALPHA.read_text())
    os.chmod(path, 0o640)
    other = tmp_path / "other-name.yaml"
    os.link(path, other)
    root = os.geteuid() == 0
    if root:  # a file someone else owns, as when root edits a user's checkout
        os.chown(path, 1234, 1234)
    before = os.stat(path)
    write_with_backup(str(path), "new: 1\n", str(tmp_path / "deploy.yaml.bak"))
    after = os.stat(path)
    assert other.read_text() == "new: 1\n"  # several links: rewritten in place, the link survives
    assert (after.st_ino, after.st_nlink, after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == \
        (before.st_ino, 2, before.st_uid, before.st_gid, 0o640)
    assert (tmp_path / "deploy.yaml.bak").read_text() == ALPHA.read_text()


def test_single_link_file_is_replaced_atomically_with_its_owner_and_mode(tmp_path):
    path = tmp_path / "deploy.yaml"
    path.write_text("old: 1\n")
    os.chmod(path, 0o604)
    if os.geteuid() == 0:
        os.chown(path, 1234, 4321)
    before = os.stat(path)
    atomic_write(str(path), "new: 1\n")
    after = os.stat(path)
    assert after.st_ino != before.st_ino  # a new inode: readers saw the old file or the new one
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (before.st_uid, before.st_gid, 0o604)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_backup_never_follows_a_link(tmp_path):
    path = tmp_path / "deploy.yaml"
    path.write_text(ALPHA.read_text())
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    (tmp_path / "deploy.yaml.bak").symlink_to(victim)
    proc = run_cli("upgrade", "dgd", "-f", str(path), "--write")
    assert proc.returncode == 2 and "deploy.yaml.bak exists" in proc.stderr
    assert victim.read_text() == "keep me\n" and path.read_text() == ALPHA.read_text()
