//! Keeping a CPU from halting while a thread sleeps for an answer due within microseconds,
//! without taking that CPU from anything else.
//!
//! On a virtual machine a CPU with nothing to run halts, and waking a thread on a halted
//! CPU goes through the host: 100-200 µs, several times a key's echo. A thread that waits
//! by spinning avoids that, but it is then a runnable thread of normal priority: when a
//! kernel worker or another program takes its CPU, it waits that task out, milliseconds,
//! even though its answer has come, where a sleeping thread would have been woken onto
//! another CPU.
//!
//! So the waiting thread sleeps, and a spinner thread of this module keeps its CPU busy
//! meanwhile. The spinner runs under `SCHED_IDLE`: the scheduler counts its CPU as idle
//! when it places a woken task, and a task of normal priority woken there preempts it. Yet
//! a spinner that never gave way held tasks up for as long as it spun (measured; the likely
//! way is a task moved to its CPU by load balancing, which preempts nothing), so the
//! spinner yields between its polls; and it stops by itself once one of the caller's
//! descriptors can be read (the caller is awake). There is one spinner per CPU, pinned to
//! it and started the first time a thread asks on that CPU, so that waking it is a wake-up
//! on the caller's own CPU, not on a halted one.
//!
//! What is deliberately absent:
//! - Raising a spinner's priority again. An unprivileged thread that has set `SCHED_IDLE`
//!   may not set `SCHED_OTHER` back, so a spinner is idle for life.
//! - A lock between the caller and its spinner: an idle-priority thread holding a lock
//!   that a caller needs would hold that caller up for as long as other work keeps the CPU.
//!   An ask is atomics and an unpark.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How many of the caller's descriptors a spinner watches.
const WATCHED: usize = 4;

/// The spinners, by CPU. A CPU whose spinner could not be started (its policy or its
/// affinity refused) has `None`, and callers there sleep without one.
pub struct IdleSpinners {
    by_cpu: Vec<OnceLock<Option<Arc<Spinner>>>>,
}

/// One CPU's spinner: what it is asked (atomics only), and its thread, to unpark.
struct Spinner {
    /// Until when to spin, in nanoseconds since `epoch`; 0 when it is not to spin.
    until_nanos: AtomicU64,
    /// The caller's descriptors (-1: none) whose readiness ends the spin.
    until_readable: [AtomicI32; WATCHED],
    /// An ask the spinner has not taken up yet.
    pending: AtomicBool,
    thread: OnceLock<Thread>,
    epoch: Instant,
}

/// What a caller holds while its CPU's spinner spins for it: dropping it (the answer came,
/// or the wait ended) lets the spinner sleep again.
pub struct SpinGuard {
    spinner: Arc<Spinner>,
}

impl IdleSpinners {
    /// The process's spinners (none started yet).
    pub fn global() -> &'static IdleSpinners {
        static SPINNERS: OnceLock<IdleSpinners> = OnceLock::new();
        SPINNERS.get_or_init(|| {
            // SAFETY: sysconf has no preconditions.
            let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
            let cpus = usize::try_from(cpus).unwrap_or(1).clamp(1, 4096);
            IdleSpinners {
                by_cpu: (0..cpus).map(|_| OnceLock::new()).collect(),
            }
        })
    }

    /// Keeps the caller's CPU busy at idle priority for up to `spin_for`, until one of
    /// `until_readable` (what the caller sleeps on; the first four count) can be read, or
    /// until the guard is dropped. `None` when this CPU has no spinner: the caller then
    /// simply sleeps, as it would anyway.
    ///
    /// The descriptors must stay open while the guard lives.
    pub fn spin_here(&self, spin_for: Duration, until_readable: &[RawFd]) -> Option<SpinGuard> {
        // SAFETY: sched_getcpu has no preconditions.
        let cpu = usize::try_from(unsafe { libc::sched_getcpu() }).ok()?;
        let spinner = self
            .by_cpu
            .get(cpu)?
            .get_or_init(|| Spinner::start(cpu).ok())
            .clone()?;
        spinner.ask(spin_for, until_readable);
        Some(SpinGuard { spinner })
    }
}

impl Drop for SpinGuard {
    fn drop(&mut self) {
        self.spinner.until_nanos.store(0, Ordering::Release);
    }
}

impl Spinner {
    fn start(cpu: usize) -> std::io::Result<Arc<Spinner>> {
        let spinner = Arc::new(Spinner {
            until_nanos: AtomicU64::new(0),
            until_readable: std::array::from_fn(|_| AtomicI32::new(-1)),
            pending: AtomicBool::new(false),
            thread: OnceLock::new(),
            epoch: Instant::now(),
        });
        let (ready_sender, ready) = std::sync::mpsc::sync_channel(1);
        let running = spinner.clone();
        let thread = std::thread::Builder::new()
            .name(format!("nagi-idle-{cpu}"))
            .spawn(move || {
                let placed = pin_to_cpu(cpu).and_then(|()| set_idle_policy());
                let failed = placed.is_err();
                let _ = ready_sender.send(placed);
                if !failed {
                    running.serve();
                }
            })?;
        ready
            .recv()
            .map_err(|_| std::io::Error::other("the spinner thread ended before it started"))??;
        let _ = spinner.thread.set(thread.thread().clone());
        Ok(spinner)
    }

    fn now_nanos(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn ask(&self, spin_for: Duration, until_readable: &[RawFd]) {
        for (slot, watched) in self.until_readable.iter().enumerate() {
            let fd = until_readable.get(slot).copied().unwrap_or(-1);
            watched.store(fd, Ordering::Relaxed);
        }
        let spin_for = u64::try_from(spin_for.as_nanos())
            .unwrap_or(u64::MAX)
            .max(1);
        let until = self.now_nanos().saturating_add(spin_for);
        self.until_nanos.fetch_max(until, Ordering::AcqRel);
        if !self.pending.swap(true, Ordering::AcqRel)
            && let Some(thread) = self.thread.get()
        {
            thread.unpark();
        }
    }

    /// The spinner's life: sleep until asked, spin until the ask ends, again.
    fn serve(&self) {
        loop {
            while !self.pending.swap(false, Ordering::AcqRel) {
                std::thread::park();
            }
            let mut polls = self.until_readable.each_ref().map(|watched| libc::pollfd {
                fd: watched.load(Ordering::Relaxed),
                events: libc::POLLIN,
                revents: 0,
            });
            while self.now_nanos() < self.until_nanos.load(Ordering::Acquire)
                && !any_readable(&mut polls)
            {
                // SAFETY: no arguments. Any task waiting for this CPU, however it came
                // here, runs at once.
                unsafe { libc::sched_yield() };
            }
        }
    }
}

/// Whether one of `polls` (negative descriptors are skipped) can be read now. A failed
/// poll, or a descriptor closed meanwhile, counts as ready: its owner is done waiting.
fn any_readable(polls: &mut [libc::pollfd; WATCHED]) -> bool {
    if polls.iter().all(|poll| poll.fd < 0) {
        return false;
    }
    // SAFETY: the pollfds are valid for the duration of the call; a stale descriptor is
    // reported (POLLNVAL) or polled, never read or written.
    let ready = unsafe { libc::poll(polls.as_mut_ptr(), WATCHED as libc::nfds_t, 0) };
    ready != 0
}

fn pin_to_cpu(cpu: usize) -> std::io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(std::io::Error::other("the CPU number is past CPU_SETSIZE"));
    }
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET stays within it for
    // cpu < CPU_SETSIZE, checked above.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: pid 0 is the calling thread; the set is valid for its size.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn set_idle_policy() -> std::io::Result<()> {
    let parameters = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; the parameters are valid for SCHED_IDLE.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &parameters) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spinners are the process's: one test at a time asks them.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
        ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// The spinner threads of this process, with the CPU each is allowed on.
    fn spinner_threads() -> Vec<(libc::pid_t, String)> {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|entry| {
                let entry = entry.ok()?;
                let id: libc::pid_t = entry.file_name().to_str()?.parse().ok()?;
                let name = std::fs::read_to_string(entry.path().join("comm")).ok()?;
                let allowed = std::fs::read_to_string(entry.path().join("status"))
                    .ok()?
                    .lines()
                    .find_map(|line| {
                        Some(line.strip_prefix("Cpus_allowed_list:")?.trim().to_owned())
                    })?;
                name.starts_with("nagi-idle-").then(|| {
                    assert_eq!(
                        Some(allowed.as_str()),
                        name.trim().strip_prefix("nagi-idle-"),
                        "{name} is not pinned to its CPU"
                    );
                    (id, allowed)
                })
            })
            .collect()
    }

    /// Nanoseconds a thread of this process has run.
    fn cpu_time(thread_id: libc::pid_t) -> u64 {
        let stat =
            std::fs::read_to_string(format!("/proc/self/task/{thread_id}/schedstat")).unwrap();
        stat.split_whitespace().next().unwrap().parse().unwrap()
    }

    fn pin_this_thread_to(cpu: usize) {
        pin_to_cpu(cpu).expect("a test thread may pin itself");
    }

    /// Pins the test's thread to `cpu`, asks that CPU's spinner to spin for `spin_for`
    /// (ended early by `until_readable`), and answers the guard and the spinner's thread id.
    fn ask_spinner_on(
        cpu: usize,
        spin_for: Duration,
        until_readable: &[RawFd],
    ) -> (SpinGuard, libc::pid_t) {
        pin_this_thread_to(cpu);
        let guard = IdleSpinners::global()
            .spin_here(spin_for, until_readable)
            .unwrap_or_else(|| panic!("CPU {cpu} has no spinner"));
        let cpu = cpu.to_string();
        let Some((spinner, _)) = spinner_threads()
            .into_iter()
            .find(|(_, allowed)| *allowed == cpu)
        else {
            panic!("no spinner pinned to CPU {cpu}");
        };
        (guard, spinner)
    }

    /// The spinner of the caller's CPU runs at idle priority, pinned to that CPU, spins
    /// while asked (its CPU time grows) and stops when the guard drops.
    #[test]
    fn a_spinner_spins_at_idle_priority_on_the_callers_cpu_until_released() {
        let _serial = one_at_a_time();
        let (guard, spinner) = ask_spinner_on(0, Duration::from_millis(300), &[]);
        // SAFETY: sched_getscheduler reads the policy of a thread of this process.
        assert_eq!(
            unsafe { libc::sched_getscheduler(spinner) },
            libc::SCHED_IDLE
        );
        let before = cpu_time(spinner);
        // Sleep (CPU 0 is free for the spinner) and see it spin. Other tests may keep that
        // CPU busy meanwhile, and at idle priority the spinner then gets a small share
        // only, so the bar is low: it ran at all.
        std::thread::sleep(Duration::from_millis(150));
        let while_asked = cpu_time(spinner) - before;
        assert!(
            while_asked > 100_000,
            "the spinner ran {while_asked} ns in 150 ms while asked"
        );
        drop(guard);
        std::thread::sleep(Duration::from_millis(20));
        let stopped = cpu_time(spinner);
        std::thread::sleep(Duration::from_millis(100));
        let after_release = cpu_time(spinner) - stopped;
        assert!(
            after_release < 2_000_000,
            "the spinner ran {after_release} ns in 100 ms after it was released"
        );
    }

    /// A thread of normal priority that wants the spinner's CPU gets it: the spinner
    /// takes a small share of what that thread takes.
    #[test]
    fn a_spinner_gives_its_cpu_to_a_thread_of_normal_priority() {
        let _serial = one_at_a_time();
        let (guard, spinner) = ask_spinner_on(0, Duration::from_secs(2), &[]);
        let spinner_before = cpu_time(spinner);
        let worker = std::thread::spawn(|| {
            pin_this_thread_to(0);
            // SAFETY: gettid has no preconditions.
            let id = unsafe { libc::gettid() };
            let start = Instant::now();
            while start.elapsed() < Duration::from_millis(200) {
                std::hint::spin_loop();
            }
            cpu_time(id)
        });
        let worker_ran = worker.join().unwrap();
        let spinner_ran = cpu_time(spinner) - spinner_before;
        drop(guard);
        assert!(
            spinner_ran * 10 < worker_ran,
            "the spinner ran {spinner_ran} ns while a normal thread on its CPU ran {worker_ran} ns"
        );
    }

    /// The spinner stops by itself once a descriptor it watches can be read.
    #[test]
    fn a_spinner_stops_when_a_watched_descriptor_becomes_readable() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let _serial = one_at_a_time();
        let (reader, mut writer) = std::io::pipe().unwrap();
        let cpu = 1.min(IdleSpinners::global().by_cpu.len() - 1);
        let (_guard, spinner) =
            ask_spinner_on(cpu, Duration::from_secs(5), &[-1, reader.as_raw_fd()]);
        writer.write_all(b"x").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let stopped = cpu_time(spinner);
        std::thread::sleep(Duration::from_millis(100));
        let after = cpu_time(spinner) - stopped;
        assert!(
            after < 2_000_000,
            "the spinner ran {after} ns in 100 ms after the data came"
        );
    }
}
