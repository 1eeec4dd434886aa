//! `sun.rt.javaCommand` as jps reads it: the launcher writes `<main class or jar> <args...>`
//! there (`<module>/<class> <args...>` for `-m`), and a JVM embedded through `JNI_CreateJavaVM`
//! leaves it empty. Rules of `sun.jvmstat.monitor.MonitoredVmUtil` (module `jdk.internal.jvmstat`).

/// The main class or jar as `jps -l` shows it: the first word of `sun.rt.javaCommand` (the
/// launcher writes `<main class or jar> <args...>`, or `<module>/<class> <args...>`; a JVM
/// embedded through `JNI_CreateJavaVM` leaves it empty). Target of the rule:
/// `sun.jvmstat.monitor.MonitoredVmUtil.mainClass(vm, true)` (module `jdk.internal.jvmstat`).
pub fn jps_main(java_command: &str) -> &str {
    java_command.split(' ').next().unwrap_or("")
}

/// The main arguments as `jps -m` shows them: what follows the first space of
/// `sun.rt.javaCommand` (`MonitoredVmUtil.mainArgs`); `None` when there are none.
pub fn jps_main_args(java_command: &str) -> Option<&str> {
    java_command
        .split_once(' ')
        .filter(|(main, _)| !main.is_empty())
        .map(|(_, args)| args)
}

/// The short form `jps` prints without `-l` (`MonitoredVmUtil.mainClass(vm, false)`): the part
/// after the last `/` or `\` (a jar's directory, a module name), then, unless it ends in `.jar`,
/// the part after the last `.` (a class's package).
pub fn jps_short_main(main: &str) -> &str {
    let after_sep = match main.rfind(['/', '\\']) {
        Some(i) if i > 0 => &main[i + 1..],
        _ => main,
    };
    match after_sep.rfind('.') {
        Some(i) if i > 0 && &after_sep[i + 1..] != "jar" => &after_sep[i + 1..],
        _ => after_sep,
    }
}
