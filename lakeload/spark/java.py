"""The Java that Spark's JVM needs (17 or newer), found the way Spark's launcher finds it: JAVA_HOME, else PATH.

Example (runs `java -version`)::

    check_java()   # the path of java ('/usr/bin/java'), or a SparkSetupError that says how to install it
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from lakeload.errors import SparkSetupError

JAVA_HELP = (
    "lakeload runs Apache Spark, which needs Java 17 or newer. Install it with "
    "`sudo apt-get install -y openjdk-17-jre-headless` (Debian/Ubuntu), `brew install openjdk@17` (macOS), "
    "or any JDK 17+, then set JAVA_HOME or put `java` on PATH."
)


def java_version(java: str) -> int | None:
    """Major version of a `java` binary, or None when it does not run."""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def check_java() -> str:
    """Path of a usable Java 17+, or a `SparkSetupError` that says how to install one."""
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if not java or not os.path.exists(java):
        raise SparkSetupError(f"No Java found (JAVA_HOME={java_home!r}, no `java` on PATH). {JAVA_HELP}")
    version = java_version(java)
    if version is None or version < 17:
        raise SparkSetupError(f"{java} is Java {version or 'of unknown version'}; {JAVA_HELP}")
    return java
