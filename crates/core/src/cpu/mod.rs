//! What burns the CPU, from stack samples taken from outside the JVM
//! (`pipeline::ThreadSampler`): per-thread CPU shares with their snapshots grouped as
//! Elasticsearch's hot threads group them ([`HotThreads`]), and stack counts for flame graphs
//! ([`Profile`]). Pure: no OS, no target memory.

use std::collections::HashMap;

use crate::pid::Pid;
use crate::threads::frames::{Frame, FrameKind};

/// One thread's stack as a sample took it.
#[derive(Debug, Clone)]
pub struct StackSample {
    /// The host thread id.
    pub tid: Pid,
    /// `java.lang.Thread.name`.
    pub name: String,
    /// Its Java frames, innermost first.
    pub frames: Vec<Frame>,
    /// Whether the thread was held (ptrace) for its walk; `false`: it provably did not run.
    pub held: bool,
    /// What the walk could not read.
    pub notes: Vec<String>,
}

/// A frame as a stack trace prints it (`StackTraceElement.toString` without a module):
/// `java.lang.Thread.sleep(Native Method)`, `Hot.a(Hot.java:12)`.
pub fn frame_text(f: &Frame) -> String {
    let at = match (f.kind, &f.file, f.line) {
        (FrameKind::Native, _, _) => "Native Method".to_string(),
        (_, Some(file), Some(line)) => format!("{file}:{line}"),
        (_, Some(file), None) => file.to_string(),
        (_, None, _) => "Unknown Source".to_string(),
    };
    format!("{}.{}({at})", f.class, f.method)
}

/// A frame as a flame graph names it: `Class.method` (the lines of one method merged).
pub fn frame_name(f: &Frame) -> String {
    format!("{}.{}", f.class, f.method)
}

/// One thread's CPU over the interval and its snapshots.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HotThread {
    /// The host thread id.
    pub tid: Pid,
    /// Its Java name, or for a thread that is not a Java thread its OS name.
    pub name: String,
    /// Whether it is a Java thread (one with frames).
    pub java: bool,
    /// CPU time used in the interval, in milliseconds.
    pub cpu_ms: f64,
    /// `cpu_ms` as a percentage of the interval (100 is one whole core).
    pub percent: f64,
    /// The snapshots grouped by their shared bottom frames (see [`group_snapshots`]).
    pub groups: Vec<SnapshotGroup>,
    /// How many snapshots were taken (of every thread: one that did not run at a snapshot
    /// has none in it).
    pub snapshots: usize,
}

/// Snapshots of one thread that share their bottom `frames.len()` frames.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SnapshotGroup {
    /// How many snapshots share them.
    pub count: usize,
    /// The shared frames as [`frame_text`] prints them, innermost first.
    pub frames: Vec<String>,
}

/// The hot threads of one interval.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HotThreads {
    /// The interval, in milliseconds.
    pub interval_ms: f64,
    /// The busiest threads, busiest first.
    pub threads: Vec<HotThread>,
}

/// Groups one thread's snapshots (each a stack, innermost first) as Elasticsearch's
/// `HotThreads` does: the first snapshot not yet grouped is compared with every later one; the
/// greatest number of bottom frames it shares with one of them is the group's depth, and every
/// later snapshot sharing that many joins it. A snapshot that shares nothing with a later one
/// is a group of its own with all its frames ("unique snapshot").
pub fn group_snapshots(snapshots: &[Vec<String>]) -> Vec<SnapshotGroup> {
    let shared = |a: &[String], b: &[String]| {
        a.iter()
            .rev()
            .zip(b.iter().rev())
            .take_while(|(x, y)| x == y)
            .count()
    };
    let mut done = vec![false; snapshots.len()];
    let mut out = Vec::new();
    for i in 0..snapshots.len() {
        if done[i] {
            continue;
        }
        done[i] = true;
        let mut best = 0;
        let mut members = Vec::new();
        for j in i + 1..snapshots.len() {
            if done[j] {
                continue;
            }
            let s = shared(&snapshots[i], &snapshots[j]);
            if s > best {
                best = s;
                members.clear();
            }
            if s == best && s > 0 {
                members.push(j);
            }
        }
        for &j in &members {
            done[j] = true;
        }
        let frames = &snapshots[i];
        let depth = if members.is_empty() {
            frames.len()
        } else {
            best
        };
        out.push(SnapshotGroup {
            count: 1 + members.len(),
            frames: frames[frames.len() - depth..].to_vec(),
        });
    }
    out
}

/// The frame a sample without Java frames is counted as: a thread running native or VM code
/// that left no frame anchor (a leaf call out of compiled code, a VM-internal thread).
pub const NO_JAVA_FRAMES: &str = "[native or VM code]";

/// A sample's stack as [`frame_text`] lines, innermost first; [`NO_JAVA_FRAMES`] with the walk's
/// first note when it has no Java frame.
pub fn snapshot_lines(s: &StackSample) -> Vec<String> {
    if s.frames.is_empty() {
        let why = s
            .notes
            .first()
            .map(String::as_str)
            .unwrap_or("no Java frame");
        return vec![format!("{NO_JAVA_FRAMES} {why}")];
    }
    s.frames.iter().map(frame_text).collect()
}

/// Stack counts: how many samples saw each distinct stack (root first), per thread name when
/// asked. What flame graphs are drawn from.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    /// Count per stack; a stack is frame names root first, the thread's name first when
    /// [`Profile::by_thread`].
    pub stacks: HashMap<Vec<String>, u64>,
    /// Whether each stack starts with its thread's name.
    pub by_thread: bool,
    /// Samples taken (ticks), whether or not a thread was running.
    pub ticks: u64,
    /// Thread stacks counted.
    pub samples: u64,
}

impl Profile {
    /// An empty profile; `by_thread`: each stack's root is its thread's name.
    pub fn new(by_thread: bool) -> Profile {
        Profile {
            by_thread,
            ..Profile::default()
        }
    }

    /// Counts one sample's stacks; a thread whose Java frames could not be walked (running
    /// native or VM code without a frame anchor) is counted as [`NO_JAVA_FRAMES`].
    pub fn add(&mut self, samples: &[StackSample]) {
        self.ticks += 1;
        for s in samples {
            let mut stack: Vec<String> = Vec::with_capacity(s.frames.len() + 1);
            if self.by_thread {
                stack.push(s.name.clone());
            }
            stack.extend(s.frames.iter().rev().map(frame_name));
            if s.frames.is_empty() {
                stack.push(NO_JAVA_FRAMES.to_string());
            }
            *self.stacks.entry(stack).or_insert(0) += 1;
            self.samples += 1;
        }
    }

    /// The stacks sorted (by frames), each with its count: the collapsed format's lines.
    pub fn sorted(&self) -> Vec<(&Vec<String>, u64)> {
        let mut v: Vec<_> = self.stacks.iter().map(|(k, c)| (k, *c)).collect();
        v.sort();
        v
    }

    /// The share of samples whose stack holds a frame named `name` (0 to 1).
    pub fn share_of(&self, name: &str) -> f64 {
        if self.samples == 0 {
            return 0.0;
        }
        let n: u64 = self
            .stacks
            .iter()
            .filter(|(k, _)| k.iter().any(|f| f == name))
            .map(|(_, c)| c)
            .sum();
        n as f64 / self.samples as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(frames: &[&str]) -> Vec<String> {
        frames.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn snapshots_group_by_their_shared_bottom_frames() {
        let a = stack(&["a", "loop", "run"]);
        let b = stack(&["b", "loop", "run"]);
        let idle = stack(&["park", "wait", "run"]);
        let groups = group_snapshots(&[a.clone(), a.clone(), b.clone(), a.clone(), idle.clone()]);
        // The first `a` shares all three frames with the other two `a`s.
        assert_eq!(
            groups[0],
            SnapshotGroup {
                count: 3,
                frames: a.clone()
            }
        );
        // `b` shares two bottom frames with nothing later but `idle` shares one: b's group is
        // that one frame with idle.
        assert_eq!(
            groups[1],
            SnapshotGroup {
                count: 2,
                frames: stack(&["run"])
            }
        );
        assert_eq!(groups.len(), 2);
        // A lone snapshot keeps all its frames.
        assert_eq!(
            group_snapshots(std::slice::from_ref(&idle)),
            vec![SnapshotGroup {
                count: 1,
                frames: idle
            }]
        );
    }
}
