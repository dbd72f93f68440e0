"""Runs the PySpark tests (unittest discover in this folder), against a PySpark made from a folder
of PySpark's files where there is one for the Spark line built; Maven's python-tests execution
runs this after packaging (spark-gpusort-core/pom.xml).

No package index here serves PySpark, so a line's PySpark may come as a folder (by default
../shared/pyspark/<line> beside the repository; see that folder's README.md) with pyspark.zip,
py4j-*-src.zip and bin/ (spark-submit and the scripts it calls). Where that folder is there, this
makes a Spark home under target/ from it and the line's Spark jars as Maven resolved them (the
classpath file the build writes), links only, nothing copied:

    SPARK_HOME/bin/*            -> <folder>/bin/*
    SPARK_HOME/jars/*.jar       -> the Spark jars in the local Maven repository
    SPARK_HOME/python/lib/*.zip -> <folder>/*.zip

and runs the tests with SPARK_HOME, PYTHONPATH=<pyspark.zip>:<py4j zip> and
GPUSORT_PYSPARK_REQUIRED=1, under which a test that cannot import that PySpark fails instead of
skipping. Where the folder is not there it says so and runs the tests as they are: they use a
PySpark the Python has (pip install pyspark==<version>) or are skipped, saying so.

Environment (the pom sets all but the last): GPUSORT_PLUGIN_JAR, GPUSORT_SPARK_LINE,
GPUSORT_PYSPARK_DIR (the folder), GPUSORT_SPARK_HOME (where to make the home),
GPUSORT_PYSPARK_DIR_REQUIRED=1 (a missing folder is an error, not a skip).
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def say(message):
    print("python tests: " + message, flush=True)


def spark_jars(classpath):
    """The jars of Spark and its dependencies on the module's compile classpath: not this
    project's own (its classes, the kernels, the compile-time stubs) nor the GPU bindings, which
    the plugin jar brings."""
    jars = []
    for entry in classpath.split(os.pathsep):
        name = os.path.basename(entry)
        if (name.endswith(".jar") and os.path.isfile(entry)
                and not name.startswith(("spark-gpusort", "jcuda", "lwjgl"))):
            jars.append(entry)
    return jars


def make_spark_home(pyspark_dir, jars, home):
    if not any(os.path.basename(p).startswith("spark-launcher_") for p in jars):
        raise SystemExit("python tests: no spark-launcher jar on the classpath given; cannot make "
                         "a Spark home")
    zips = sorted(glob.glob(os.path.join(pyspark_dir, "*.zip")))
    if os.path.lexists(home):
        shutil.rmtree(home)
    for sub in ("bin", "jars", os.path.join("python", "lib")):
        os.makedirs(os.path.join(home, sub))
    for src in sorted(glob.glob(os.path.join(pyspark_dir, "bin", "*"))):
        os.symlink(os.path.abspath(src), os.path.join(home, "bin", os.path.basename(src)))
    for jar in jars:
        link = os.path.join(home, "jars", os.path.basename(jar))
        if not os.path.lexists(link):
            os.symlink(os.path.abspath(jar), link)
    libs = []
    for z in zips:
        link = os.path.join(home, "python", "lib", os.path.basename(z))
        os.symlink(os.path.abspath(z), link)
        libs.append(link)
    # Spark's launcher takes a home with a RELEASE file for an installed one (jars/ as it is).
    with open(os.path.join(home, "RELEASE"), "w") as f:
        f.write("Spark (for the PySpark tests: %s with Maven's jars)\n" % pyspark_dir)
    return len(jars), libs


def main(argv):
    env = dict(os.environ)
    classpath = ""
    if len(argv) == 2 and argv[0] == "--spark-classpath":
        classpath = argv[1]
    elif argv:
        raise SystemExit("usage: run_tests.py [--spark-classpath CLASSPATH]")
    line = env.get("GPUSORT_SPARK_LINE", "")
    pyspark_dir = env.get("GPUSORT_PYSPARK_DIR", "")
    home = env.get("GPUSORT_SPARK_HOME", "")
    have_dir = bool(pyspark_dir) and os.path.isfile(os.path.join(pyspark_dir, "pyspark.zip"))
    if not have_dir:
        if env.get("GPUSORT_PYSPARK_DIR_REQUIRED") == "1":
            say("no PySpark for Spark %s at %s (pyspark.zip), and one was required" % (
                line, pyspark_dir))
            return 2
        say("no PySpark for Spark %s at %s (pyspark.zip): running with the Python's own PySpark "
            "if it has one, else the PySpark tests are skipped" % (line, pyspark_dir or "(unset)"))
    elif not spark_jars(classpath):
        say("no Spark jars given (--spark-classpath) to make a Spark home from; running with the "
            "Python's own PySpark if it has one, else the PySpark tests are skipped")
    else:
        pyspark_dir = os.path.abspath(pyspark_dir)
        home = os.path.abspath(home or tempfile.mkdtemp(prefix="gpusort-spark-home-"))
        n, libs = make_spark_home(pyspark_dir, spark_jars(classpath), home)
        py_zips = [z for z in libs if os.path.basename(z) == "pyspark.zip"]
        py_zips += [z for z in libs if os.path.basename(z).startswith("py4j-")]
        env["SPARK_HOME"] = home
        env["PYTHONPATH"] = os.pathsep.join(py_zips + ([env["PYTHONPATH"]]
                                                       if env.get("PYTHONPATH") else []))
        env["PYSPARK_PYTHON"] = sys.executable
        env["PYSPARK_DRIVER_PYTHON"] = sys.executable
        env["GPUSORT_PYSPARK_REQUIRED"] = "1"
        say("PySpark from %s, Spark home %s (%d jars from Maven), PYTHONPATH=%s" % (
            pyspark_dir, home, n, env["PYTHONPATH"]))
    # Py4J leaves sockets to the garbage collector; unittest would warn of each.
    command = [sys.executable, "-B", "-W", "ignore::ResourceWarning", "-m", "unittest", "discover",
               "-v", "-s", HERE, "-t", HERE]
    return subprocess.call(command, cwd=HERE, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
