//! Asking the scheduler for a short time slice for a thread that waits on a person.
//!
//! Since Linux 6.12 a thread of normal priority may ask for its own slice length
//! (`sched_attr.sched_runtime`, 0.1 ms to 100 ms, no privilege needed). The EEVDF
//! scheduler lets a waking thread whose slice is shorter than the running thread's preempt
//! it at once, instead of waiting until that thread has run its own slice out (up to a
//! scheduler tick, 4 ms at 250 Hz). It does so only while the waking thread is eligible,
//! that is, has not had more than its share of the CPU lately: a wake-up soon after the
//! thread's own run can still wait for the tick. A thread that runs for microseconds per
//! wake-up, such as the key thread of a direct attach, gives nothing up by it: its runs
//! were short anyway. Older kernels take the request and ignore the length.
//!
//! What is deliberately absent:
//! - A slice for the pane's shell. Scheduling attributes pass to children, so the shell's
//!   compilers and test runs would be cut into 0.1 ms pieces too, and the shell is the
//!   person's program, not ours.
//! - Any change of policy or nice value: the thread keeps both, and asks for nothing a
//!   person would need privileges for.

use std::time::Duration;

/// The kernel's `struct sched_attr`, first version (48 bytes), which every kernel since
/// 3.14 takes.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
}

const SCHED_ATTR_SIZE: u32 = std::mem::size_of::<SchedAttr>() as u32;

/// Asks for a slice of `slice` for the calling thread, keeping its policy and nice value.
/// An error means the kernel refused the call itself.
pub fn request_short_slice(slice: Duration) -> std::io::Result<()> {
    let mut attributes = attributes_of(0)?;
    attributes.size = SCHED_ATTR_SIZE;
    attributes.sched_flags = 0;
    attributes.sched_runtime = u64::try_from(slice.as_nanos()).unwrap_or(u64::MAX);
    // SAFETY: pid 0 is the calling thread; the attributes are a valid sched_attr of the
    // size they state, and the kernel only reads them.
    let result = unsafe {
        libc::syscall(
            libc::SYS_sched_setattr,
            0,
            &attributes as *const SchedAttr,
            0,
        )
    };
    if result != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The slice of the thread `thread_id` (0: the calling thread) as the kernel holds it. On
/// a kernel without slices of a thread's own (before 6.12) it says nothing useful.
pub fn slice_of(thread_id: i32) -> std::io::Result<Duration> {
    Ok(Duration::from_nanos(
        attributes_of(thread_id)?.sched_runtime,
    ))
}

/// Whether the running kernel keeps a normal thread's own slice (6.12 and later).
pub fn kernel_keeps_own_slices() -> bool {
    let Ok(release) = std::fs::read_to_string("/proc/sys/kernel/osrelease") else {
        return false;
    };
    let mut numbers = release
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|part| part.parse::<u32>().ok());
    let major = numbers.next().unwrap_or(0);
    let minor = numbers.next().unwrap_or(0);
    (major, minor) >= (6, 12)
}

fn attributes_of(thread_id: i32) -> std::io::Result<SchedAttr> {
    let mut attributes = SchedAttr::default();
    // SAFETY: the kernel writes at most SCHED_ATTR_SIZE bytes into the attributes, which
    // are that size.
    let result = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            thread_id,
            &mut attributes as *mut SchedAttr,
            SCHED_ATTR_SIZE,
            0,
        )
    };
    if result != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(attributes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_gets_the_slice_it_asked_for_and_keeps_its_policy_and_nice_value() {
        std::thread::spawn(|| {
            // SAFETY: raising the calling thread's nice value needs no privilege.
            assert_eq!(unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 3) }, 0);
            let before = attributes_of(0).unwrap();
            request_short_slice(Duration::from_micros(100)).unwrap();
            let after = attributes_of(0).unwrap();
            assert_eq!(after.sched_policy, before.sched_policy);
            assert_eq!(after.sched_nice, 3);
            if kernel_keeps_own_slices() {
                assert_eq!(slice_of(0).unwrap(), Duration::from_micros(100));
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_slice_stays_with_the_thread_that_asked() {
        let asked = std::thread::spawn(|| {
            request_short_slice(Duration::from_micros(100)).unwrap();
            slice_of(0).unwrap()
        })
        .join()
        .unwrap();
        let other = std::thread::spawn(|| slice_of(0).unwrap()).join().unwrap();
        if kernel_keeps_own_slices() {
            assert_eq!(asked, Duration::from_micros(100));
            assert_ne!(other, asked);
        }
    }
}
