"""Executor-safe: bucket URL protocols that need their own handling (imports nothing, so every module may)."""

from __future__ import annotations

SFTP_PROTOCOLS = ("sftp", "ssh")  # paramiko's SFTP file system (`sftp_fs`): no atomic overwrite, renames after write
