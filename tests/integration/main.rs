//! hsinspect's integration tests: one test binary, a module per subject. Each runs the `inspect`
//! binary (or the library) against real programs: JVMs of every JDK with their own jcmd, jstat
//! and jps as the reference, Prometheus and promtool, tmux, podman, Wine and qemu.
//!
//! Tiers (scripts/README.md): plain `cargo test` runs what needs nothing but the repository;
//! every test that needs a JDK, root, gdb, Prometheus, the test users or the network is
//! `#[ignore = "requires <what>, ... (scripts/test.sh)"]` in the words of `support/tiers.rs`,
//! and `scripts/test.sh` runs them all with
//! `--include-ignored`, failing with a how-to message for anything still missing. Run one subject
//! with `cargo test --test integration -- --include-ignored live::`.
//! The parser's own property tests are the library's (`crates/core/tests`).

/// Helpers: real JVMs, jcmd and jstat as references, the `inspect` binary, Prometheus.
mod support;

/// JVMs in containerd, podman and unshare containers, named by their pods.
mod containers;
/// `--core` on gcore and kernel cores of real JVMs, against jcmd before the dump.
mod coredump;
/// What burns the CPU: `inspect hot` against /proc, `inspect record`'s shares and files.
mod cpu;
/// The metric dialects against the JVM's own MXBeans.
mod dialects;
/// A forced read interrupted, killed or refused: the JVM is always left as it was.
mod faults;
/// What real servers showed: another user's JVM, service umasks, starting JVMs.
mod field;
/// Cores of another architecture (aarch64 on x86_64 and back).
mod foreign_core;
/// `--format json` and `--format prometheus` of the counter listing; no machine format (serve,
/// top, OTLP included) carries a JVM's arguments or properties.
mod formats;
mod heap;
/// HPROF heap dumps: jcmd's read by VisualVM's heap library and the strict reader.
mod heapdump;
/// Hostile hsperfdata files, by path and by pid: refused with a message, never followed.
mod hostile_files;
/// The FROM scratch image built and run with podman.
mod image;
/// `inspect info`: flags and command line against jcmd and jinfo, live, stopped and from a core.
mod info;
/// JDK 8 (Debian's openjdk-8 in a sid root) as a target.
mod jdk8;
/// deploy/kubernetes/ against the Kubernetes schemas, offline; its DaemonSet's arguments run.
mod kubernetes;
/// `inspect list` against jps, on every kind of JVM a host has.
mod list;
/// `inspect -F <pid>` and `inspect <pid>` on live JDK 17 JVMs, against jcmd.
mod live;
/// Every HotSpot in the field: JDK 11-25, collectors, stripped libjvm, containers.
mod matrix;
/// `--core` on Windows minidumps of real JDK 21 JVMs, against jcmd.exe.
mod minidump;
/// `inspect threads --core` on a Windows JDK 21 JVM's minidump, against jcmd.exe.
mod minidump_threads;
/// `inspect links` and inspect called as jstack, jmap, jinfo, jstat and jcmd, against the real tools.
mod multicall;
/// `serve --otlp`: the OTLP push, decoded with opentelemetry-proto, against the `otel` page.
mod otlp;
/// The parser and `inspect <file>` on the committed test data, against jstat.
mod perfdata_testdata;
/// The build without the live backend: files, cores and dumps read the same.
mod portable;
/// `inspect threads --core` and `inspect histo --core` on the recorded JVM of testdata/threads.
mod recorded_jvm;
/// `inspect serve` scraped by a real Prometheus, checked by promtool.
mod serve;
/// `serve --web.config.file`: TLS, mutual TLS and Basic authentication.
mod serve_tls;
/// `inspect stat` against jstat on every captured region, byte for byte.
mod stat;
/// `inspect stat` on live JVMs against jstat read before and after.
mod stat_live;
/// The static (musl) release binary in an empty root.
mod static_binary;
/// `serve --thread-states` in every dialect against `jcmd Thread.print` of the same JVM.
mod thread_states;
/// `inspect threads` against `jcmd Thread.print -l` of the same JVM.
mod threads;
/// `inspect threads` on cores, SIGSTOPped and stuck JVMs, stripped libjvm, damaged cores.
mod threads_field;
/// `inspect top` in a real terminal (tmux) and as a script.
mod top;
/// `inspect threads --virtual` against `jcmd Thread.dump_to_file` of the same JVM, live and cored.
mod virtual_threads;
