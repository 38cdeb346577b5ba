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
//! Idle priority is idle only within the spinner's own scheduling group. Linux groups the
//! tasks of a session (autogroup, on by default on desktops), and between groups a group
//! with only its spinner runnable weighs as much as any other: a spinner that spun on while
//! a build of another terminal wanted its CPU took half of that CPU (measured). And a
//! spinner that merely waits in the run queue of the server's group makes the scheduler
//! count that group as busy, so the key thread's wake-up for the echo stops preempting the
//! build (measured: a key's p50 2-4x tmux's with both CPUs busy). So a spinner takes no
//! ask while every CPU has work (`/proc/loadavg`: as many runnable tasks as CPUs, besides
//! itself), gives an ask up as soon as it finds that another task held its CPU for over
//! 100 µs, before it got to run or between two of its polls, and after a give-up takes no
//! ask on that CPU for a second, doubling up to 16 s while give-ups follow each other. A
//! CPU that busy is not about to halt anyway.
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

/// A gap in the spinner's running longer than this means another task held its CPU: an
/// interrupt or a kernel worker delivering the echo takes a few microseconds, the shell
/// that echoes tens; a thread of another program that the scheduler ran instead of the
/// spinner, a slice of at least 700 µs.
const CPU_WANTED_AFTER_NANOS: u64 = 100_000;

/// After a spinner gives an ask up, its CPU gets no spinner for this long; each give-up in
/// a row doubles the pause, up to `CONTENDED_PAUSE_MAX_NANOS`, and an ask that runs its
/// course resets it. A CPU that other sessions keep busy does not halt, and there even an
/// ask that is given up costs the asker: the spinner waits in the run queue of the
/// asker's session, which the scheduler then counts as busy, so the asker's wake-up for
/// the echo no longer preempts (measured: p50 of a key 2-4x tmux's with both CPUs busy).
const CONTENDED_PAUSE_NANOS: u64 = 1_000_000_000;
const CONTENDED_PAUSE_MAX_NANOS: u64 = 16_000_000_000;

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
    /// When the last ask came, in nanoseconds since `epoch`.
    asked_at_nanos: AtomicU64,
    /// Until when asks are not taken (the CPU was found busy), since `epoch`.
    paused_until_nanos: AtomicU64,
    /// The pause the next give-up starts.
    next_pause_nanos: AtomicU64,
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
        if spinner.now_nanos() < spinner.paused_until_nanos.load(Ordering::Acquire) {
            return None;
        }
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
            asked_at_nanos: AtomicU64::new(0),
            paused_until_nanos: AtomicU64::new(0),
            next_pause_nanos: AtomicU64::new(CONTENDED_PAUSE_NANOS),
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
        let now = self.now_nanos();
        self.asked_at_nanos.store(now, Ordering::Release);
        let until = now.saturating_add(spin_for);
        self.until_nanos.fetch_max(until, Ordering::AcqRel);
        if !self.pending.swap(true, Ordering::AcqRel)
            && let Some(thread) = self.thread.get()
        {
            thread.unpark();
        }
    }

    /// The spinner's life: sleep until asked, spin until the ask ends, again. An ask is
    /// given up, and the CPU paused (`pause`), when every CPU has work or another task held
    /// this one for over `CPU_WANTED_AFTER_NANOS`, before the spinner got to it or between
    /// two of its polls: that CPU is not about to halt, and spinning on would take time
    /// from that task when it is in another session (see the module doc).
    fn serve(&self) {
        let mut load = LoadAverage::open();
        loop {
            while !self.pending.swap(false, Ordering::AcqRel) {
                std::thread::park();
            }
            let mut last_ran = self.now_nanos();
            if last_ran.saturating_sub(self.asked_at_nanos.load(Ordering::Acquire))
                > CPU_WANTED_AFTER_NANOS
                || every_cpu_has_work(&mut load)
            {
                self.pause(last_ran);
                continue;
            }
            let mut polls = self.until_readable.each_ref().map(|watched| libc::pollfd {
                fd: watched.load(Ordering::Relaxed),
                events: libc::POLLIN,
                revents: 0,
            });
            loop {
                let now = self.now_nanos();
                if now.saturating_sub(last_ran) > CPU_WANTED_AFTER_NANOS {
                    self.pause(now);
                    break;
                }
                if now >= self.until_nanos.load(Ordering::Acquire) || any_readable(&mut polls) {
                    self.next_pause_nanos
                        .store(CONTENDED_PAUSE_NANOS, Ordering::Relaxed);
                    break;
                }
                last_ran = now;
                // SAFETY: no arguments. Any task waiting for this CPU, however it came
                // here, runs at once.
                unsafe { libc::sched_yield() };
            }
        }
    }

    /// Takes no asks for a while: another task held this CPU (`CONTENDED_PAUSE_NANOS`).
    fn pause(&self, now: u64) {
        let pause = self.next_pause_nanos.load(Ordering::Relaxed);
        self.paused_until_nanos
            .store(now.saturating_add(pause), Ordering::Release);
        self.next_pause_nanos.store(
            pause.saturating_mul(2).min(CONTENDED_PAUSE_MAX_NANOS),
            Ordering::Relaxed,
        );
    }
}

/// `/proc/loadavg`, kept open: its fourth field counts the tasks runnable right now, on
/// every CPU.
struct LoadAverage {
    file: Option<std::fs::File>,
    cpus: u64,
}

impl LoadAverage {
    fn open() -> LoadAverage {
        // SAFETY: sysconf has no preconditions.
        let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        LoadAverage {
            file: std::fs::File::open("/proc/loadavg").ok(),
            cpus: u64::try_from(cpus).unwrap_or(1).max(1),
        }
    }
}

/// Whether, besides the spinner that asks, at least as many tasks are runnable as there
/// are CPUs: then no CPU is about to halt. `false` when `/proc/loadavg` cannot be read.
fn every_cpu_has_work(load: &mut LoadAverage) -> bool {
    use std::os::unix::fs::FileExt;
    let Some(file) = &load.file else {
        return false;
    };
    let mut buffer = [0u8; 128];
    let Ok(length) = file.read_at(&mut buffer, 0) else {
        return false;
    };
    // "0.12 0.34 0.56 3/812 4242": runnable/all after the three averages.
    let runnable = std::str::from_utf8(&buffer[..length])
        .ok()
        .and_then(|text| text.split_whitespace().nth(3))
        .and_then(|field| field.split('/').next())
        .and_then(|count| count.parse::<u64>().ok());
    runnable.is_some_and(|runnable| runnable.saturating_sub(1) >= load.cpus)
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
    /// The caller must sleep at once, as a key thread does: a spinner that gets its CPU
    /// late gives the ask up.
    fn ask_spinner_on(
        cpu: usize,
        spin_for: Duration,
        until_readable: &[RawFd],
    ) -> (SpinGuard, libc::pid_t) {
        pin_this_thread_to(cpu);
        // An earlier test's give-up leaves a pause behind.
        forget_pauses();
        // The first ask starts the spinner; it is found before the ask that counts.
        drop(IdleSpinners::global().spin_here(Duration::ZERO, &[]));
        let cpu_name = cpu.to_string();
        let Some((spinner, _)) = spinner_threads()
            .into_iter()
            .find(|(_, allowed)| *allowed == cpu_name)
        else {
            panic!("no spinner pinned to CPU {cpu}");
        };
        // On a busy machine the first ask may have been given up.
        forget_pauses();
        let guard = IdleSpinners::global()
            .spin_here(spin_for, until_readable)
            .unwrap_or_else(|| panic!("CPU {cpu} has no spinner"));
        (guard, spinner)
    }

    /// Waits up to `limit` for the spinner of `cpu` (thread `spinner`) to have taken up every
    /// ask and to sleep; answers whether it did. Until then a test cannot tell an ask it
    /// gave up from one it has not got to yet.
    fn wait_until_done_with_asks(cpu: usize, spinner: libc::pid_t, limit: Duration) -> bool {
        let Some(Some(asked)) = IdleSpinners::global().by_cpu[cpu].get() else {
            panic!("CPU {cpu} has no spinner");
        };
        let started = Instant::now();
        while started.elapsed() < limit {
            let text = std::fs::read_to_string(format!("/proc/self/task/{spinner}/stat")).unwrap();
            let stat = crate::procfs::parse_stat(spinner, &text).expect("a thread's stat parses");
            if stat.state == 'S' && !asked.pending.load(Ordering::Acquire) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    }

    fn forget_pauses() {
        let started = IdleSpinners::global()
            .by_cpu
            .iter()
            .filter_map(|slot| slot.get());
        for spinner in started.flatten() {
            spinner.paused_until_nanos.store(0, Ordering::Release);
            spinner
                .next_pause_nanos
                .store(CONTENDED_PAUSE_NANOS, Ordering::Relaxed);
        }
    }

    /// The spinner of the caller's CPU runs at idle priority, pinned to that CPU, spins
    /// while asked (its CPU time grows) and stops when the guard drops.
    #[test]
    fn a_spinner_spins_at_idle_priority_on_the_callers_cpu_until_released() {
        let _serial = one_at_a_time();
        // A spinner gives its ask up when another task holds its CPU, and takes none while
        // every CPU has work (other tests may run now), so a few tries are allowed, going
        // round the CPUs: a program of another session may keep one of them.
        let cpus = IdleSpinners::global().by_cpu.len();
        let mut tries = 0;
        let (guard, spinner, while_asked) = loop {
            let cpu = tries % cpus;
            tries += 1;
            let (guard, spinner) = ask_spinner_on(cpu, Duration::from_millis(300), &[]);
            // SAFETY: sched_getscheduler reads the policy of a thread of this process.
            assert_eq!(
                unsafe { libc::sched_getscheduler(spinner) },
                libc::SCHED_IDLE
            );
            let before = cpu_time(spinner);
            // Sleep (this CPU is free for the spinner) and see it spin.
            std::thread::sleep(Duration::from_millis(150));
            let while_asked = cpu_time(spinner) - before;
            if while_asked > 100_000 || tries == 6 {
                break (guard, spinner, while_asked);
            }
        };
        assert!(
            while_asked > 100_000,
            "the spinner ran {while_asked} ns in 150 ms while asked, in {tries} tries (it takes \
             no ask while every CPU has work: was this machine busy?)"
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

    /// A thread of normal priority that wakes on the spinner's CPU while it spins gets
    /// that CPU: the spinner takes a small share of what that thread takes.
    #[test]
    fn a_spinner_gives_its_cpu_to_a_thread_of_normal_priority() {
        let _serial = one_at_a_time();
        let (go, wait_for_go) = std::sync::mpsc::channel::<()>();
        let worker = std::thread::spawn(move || {
            pin_this_thread_to(0);
            wait_for_go.recv().unwrap();
            // SAFETY: gettid has no preconditions.
            let id = unsafe { libc::gettid() };
            let start = Instant::now();
            while start.elapsed() < Duration::from_millis(200) {
                std::hint::spin_loop();
            }
            cpu_time(id)
        });
        let (guard, spinner) = ask_spinner_on(0, Duration::from_secs(2), &[]);
        std::thread::sleep(Duration::from_millis(20));
        let spinner_before = cpu_time(spinner);
        go.send(()).unwrap();
        let worker_ran = worker.join().unwrap();
        let spinner_ran = cpu_time(spinner) - spinner_before;
        drop(guard);
        assert!(
            spinner_ran * 10 < worker_ran,
            "the spinner ran {spinner_ran} ns while a normal thread on its CPU ran {worker_ran} ns"
        );
    }

    /// A program of another session that wants the spinner's CPU gets it: the spinner runs
    /// under a tenth of the program's time, and then takes no ask for a while. The
    /// scheduler groups threads by session (autogroup), and between groups an idle-priority
    /// thread weighs as much as its group: a spinner that kept spinning would take half of
    /// that CPU from a build in another terminal.
    #[test]
    fn a_spinner_gives_its_cpu_to_a_program_of_another_session() {
        use std::os::unix::process::CommandExt;
        let _serial = one_at_a_time();
        let mut command = std::process::Command::new("sh");
        command.args(["-c", "while :; do :; done"]);
        // SAFETY: setsid and pin_to_cpu's sched_setaffinity are system calls, safe between
        // fork and exec; pin_to_cpu allocates only on a failure it returns.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                pin_to_cpu(0)
            })
        };
        /// The loop, killed however the test ends: left running it would spin for good.
        struct KilledOnDrop(std::process::Child);
        impl Drop for KilledOnDrop {
            fn drop(&mut self) {
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }
        let program = KilledOnDrop(command.spawn().expect("sh runs"));
        let program_cpu_time = || -> u64 {
            let stat =
                std::fs::read_to_string(format!("/proc/{}/schedstat", program.0.id())).unwrap();
            stat.split_whitespace().next().unwrap().parse().unwrap()
        };
        std::thread::sleep(Duration::from_millis(50));
        let (guard, spinner) = ask_spinner_on(0, Duration::from_secs(2), &[]);
        let program_before = program_cpu_time();
        let spinner_before = cpu_time(spinner);
        std::thread::sleep(Duration::from_millis(300));
        let program_ran = program_cpu_time() - program_before;
        let spinner_ran = cpu_time(spinner) - spinner_before;
        drop(guard);
        // On a loaded machine the spinner may not have run yet; what it did with the ask is
        // known once it sleeps again.
        let settled = wait_until_done_with_asks(0, spinner, Duration::from_secs(5));
        // Having given the ask up, the spinner takes none for a while.
        let asked_again = IdleSpinners::global().spin_here(Duration::from_millis(1), &[]);
        drop(program);
        // Measured against the program's own time, not the clock's, so that other work on
        // a loaded machine sharing that CPU with the program does not count against the
        // spinner.
        assert!(
            spinner_ran * 10 < program_ran,
            "the spinner ran {spinner_ran} ns while a program of another session on its CPU \
             ran {program_ran} ns"
        );
        assert!(
            settled,
            "the spinner of CPU 0 did not take up its ask and sleep again within 5 s"
        );
        assert!(
            asked_again.is_none(),
            "the spinner took an ask right after giving one up on a busy CPU"
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
