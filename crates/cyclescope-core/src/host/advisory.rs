//! cyclescope's checks beyond the harness: things that disturb measurements without making a
//! host unfit in the harness's sense (which retries disturbed trials instead). They warn, never
//! fail: CPU isolation, the ASLR setting, load average, other runnable processes on the
//! measurement CPU, and running under a hypervisor. Reads through the root only; cheap enough to
//! run before every measurement.

use std::collections::BTreeSet;

use super::check::{CheckResult, HostCheck};
use super::root::{HostRoot, mask_has_cpu, parse_cpu_list};

/// The last value of a kernel parameter on the command line (`Some("")` for a bare flag).
fn cmdline_param<'a>(cmdline: &'a str, name: &str) -> Option<&'a str> {
    cmdline
        .split_whitespace()
        .take_while(|w| *w != "--")
        .filter_map(|w| match w.split_once('=') {
            Some((k, v)) if k == name => Some(v),
            None if w == name => Some(""),
            _ => None,
        })
        .last()
}

/// `isolcpus=[flag,…,]list`: the flags (`nohz`, `domain`, `managed_irq`) are dropped.
fn isolcpus_list(value: &str) -> Option<BTreeSet<usize>> {
    let list: Vec<&str> = value
        .split(',')
        .filter(|t| t.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    parse_cpu_list(&list.join(","))
}

/// CPU N kept away from the scheduler, the tick, RCU callbacks and default IRQ routing.
pub(crate) fn isolation(root: &HostRoot, cpu: usize) -> CheckResult {
    let c = HostCheck::Isolation;
    let cmdline = root.read("proc/cmdline").unwrap_or_default();
    let isolated = match root.read("sys/devices/system/cpu/isolated") {
        Some(text) => parse_cpu_list(&text).unwrap_or_default(),
        None => cmdline_param(&cmdline, "isolcpus")
            .and_then(isolcpus_list)
            .unwrap_or_default(),
    };
    let nohz = root
        .read("sys/devices/system/cpu/nohz_full")
        .or_else(|| cmdline_param(&cmdline, "nohz_full").map(str::to_string))
        .and_then(|t| parse_cpu_list(&t))
        .unwrap_or_default();
    // nohz_full CPUs are also RCU no-callback CPUs; a bare `rcu_nocbs` means all CPUs.
    let rcu = match cmdline_param(&cmdline, "rcu_nocbs") {
        Some("") => true,
        Some(list) => parse_cpu_list(list).is_some_and(|s| s.contains(&cpu)),
        None => false,
    } || nohz.contains(&cpu);
    let irq_mask = root.read("proc/irq/default_smp_affinity");
    let irq_here = irq_mask.as_deref().and_then(|m| mask_has_cpu(m, cpu));
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let irq = match (&irq_mask, irq_here) {
        (Some(m), Some(true)) => format!("default IRQ affinity {m} includes it"),
        (Some(m), Some(false)) => format!("default IRQ affinity {m} excludes it"),
        _ => "default IRQ affinity unknown".to_string(),
    };
    let value = format!(
        "isolcpus {}, nohz_full {}, rcu_nocbs {}, {irq}",
        yes_no(isolated.contains(&cpu)),
        yes_no(nohz.contains(&cpu)),
        yes_no(rcu)
    );
    if isolated.contains(&cpu) && nohz.contains(&cpu) && rcu && irq_here != Some(true) {
        return CheckResult::pass(c, value);
    }
    // Shielded at run time (`tune --apply`): the other tasks' cpuset and new IRQs leave it out.
    if let Some(others) = super::cpuset::shield_cpus(root)
        && !others.contains(&cpu)
        && irq_here == Some(false)
    {
        return CheckResult::pass(
            c,
            format!(
                "shielded by `cyclescope tune`: other tasks in cpuset {} (CPUs {}), {irq}",
                super::cpuset::SHIELD_SET,
                super::root::format_cpu_list(&others)
            ),
        );
    }
    if let Some(given) = super::cpuset::partition_cpus(root)
        && given.contains(&cpu)
        && irq_here == Some(false)
    {
        return CheckResult::pass(
            c,
            format!(
                "shielded by `cyclescope tune`: CPUs {} are the cgroup v2 cpuset partition {}, {irq}",
                super::root::format_cpu_list(&given),
                super::cpuset::PARTITION_GROUP
            ),
        );
    }
    let others = root
        .online_cpus()
        .map(|s| s.into_iter().filter(|&x| x != cpu).collect::<BTreeSet<_>>())
        .filter(|s| !s.is_empty())
        .map(|s| format!(" irqaffinity={}", super::root::format_cpu_list(&s)))
        .unwrap_or_default();
    CheckResult::warn(
        c,
        value,
        format!(
            "shield it now with `sudo cyclescope tune --cpu {cpu} --apply` (cpusets and IRQ \
             affinity, undone by `tune --restore`), or boot with isolcpus={cpu} nohz_full={cpu} \
             rcu_nocbs={cpu}{others} (neither is required by the harness, which retries disturbed \
             trials instead)"
        ),
    )
}

/// Full ASLR (2) is what the method wants: each trial process samples a fresh layout.
pub(crate) fn aslr(root: &HostRoot) -> CheckResult {
    let c = HostCheck::Aslr;
    let fix = "sudo sysctl kernel.randomize_va_space=2";
    match root.read("proc/sys/kernel/randomize_va_space").as_deref() {
        Some("2") => CheckResult::pass(
            c,
            "randomize_va_space=2: each trial process samples a fresh memory layout",
        ),
        Some(v @ ("0" | "1")) => CheckResult::warn(
            c,
            format!(
                "randomize_va_space={v}: trial processes {} share one memory layout, so the \
                 separate-process trials do not sample layouts",
                if v == "0" { "all" } else { "partly" }
            ),
            fix,
        ),
        Some(v) => CheckResult::unknown(c, format!("randomize_va_space={v}"), fix),
        None => CheckResult::unknown(c, "randomize_va_space unreadable", fix),
    }
}

/// Other work on the machine: the 1-minute load average should stay below 1.
pub fn load_average(root: &HostRoot) -> CheckResult {
    let c = HostCheck::LoadAverage;
    let loads: Option<Vec<f64>> = root.read("proc/loadavg").and_then(|t| {
        t.split_whitespace()
            .take(3)
            .map(|x| x.parse().ok())
            .collect::<Option<Vec<f64>>>()
            .filter(|v| v.len() == 3)
    });
    let Some(l) = loads else {
        return CheckResult::unknown(c, "/proc/loadavg unreadable", "check that /proc is mounted");
    };
    let value = format!("{:.2} {:.2} {:.2} (1, 5, 15 min)", l[0], l[1], l[2]);
    if l[0] >= 1.0 {
        CheckResult::warn(
            c,
            value,
            "stop other work before measuring (see `top`): disturbed trials will be retried",
        )
    } else {
        CheckResult::pass(c, value)
    }
}

/// Processes other than this one that are running (state R) on CPU N, from the `processor`
/// field of `/proc/<pid>/stat` (main threads only, to stay cheap); and another cyclescope
/// holding CPU N's lock in the machine-wide folder `cpu_locks`, measuring there even while its
/// worker sleeps between trials.
pub(crate) fn busy_cpu(
    root: &HostRoot,
    cpu: usize,
    self_pid: Option<u32>,
    cpu_locks: Option<&std::path::Path>,
) -> CheckResult {
    let c = HostCheck::BusyCpu;
    if let Some(holder) = cpu_locks.and_then(|d| crate::cpu::lock::holder(d, cpu)) {
        return CheckResult::warn(
            c,
            format!(
                "another cyclescope is measuring on CPU {cpu}: process {}",
                crate::sanitize::terminal(&holder)
            ),
            format!("wait for it to finish or measure on another CPU than {cpu}"),
        );
    }
    if !root.exists("proc") {
        return CheckResult::unknown(c, "cannot list /proc", "check that /proc is mounted");
    }
    let mut busy = Vec::new();
    for pid in root
        .entries("proc")
        .into_iter()
        .filter_map(|e| e.parse::<u32>().ok())
    {
        if Some(pid) == self_pid {
            continue;
        }
        let Some(stat) = root.read(&format!("proc/{pid}/stat")) else {
            continue; // exited since the listing
        };
        if let Some((comm, 'R', on)) = parse_stat(&stat)
            && on == cpu
        {
            busy.push(format!("{pid} ({comm})"));
        }
    }
    if busy.is_empty() {
        return CheckResult::pass(c, format!("no other process running on CPU {cpu}"));
    }
    let n = busy.len();
    let shown: Vec<String> = busy.iter().take(5).cloned().collect();
    let more = if n > 5 {
        format!(", … {} more", n - 5)
    } else {
        String::new()
    };
    CheckResult::warn(
        c,
        format!(
            "{n} other process(es) running on CPU {cpu}: {}{more}",
            shown.join(", ")
        ),
        format!("move them elsewhere (sudo taskset -acp <other CPUs> PID) or isolate CPU {cpu}"),
    )
}

/// (comm, state, processor) of a `/proc/<pid>/stat` line. `comm` may contain spaces and
/// parentheses, so fields are counted from the last `)`: state is field 3, processor field 39.
fn parse_stat(stat: &str) -> Option<(&str, char, usize)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?;
    let rest: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    let state = rest.first()?.chars().next()?;
    let processor = rest.get(39 - 3)?.parse().ok()?;
    Some((comm, state, processor))
}

/// A virtual CPU shares its core with other guests and usually has no PMU.
pub(crate) fn hypervisor(root: &HostRoot) -> CheckResult {
    let c = HostCheck::Hypervisor;
    let Some(cpuinfo) = root.read_raw("proc/cpuinfo") else {
        return CheckResult::unknown(c, "/proc/cpuinfo unreadable", "check that /proc is mounted");
    };
    if !cpuinfo.contains("hypervisor") {
        return CheckResult::pass(c, "bare metal (no hypervisor flag in /proc/cpuinfo)");
    }
    let product = [
        "sys/class/dmi/id/sys_vendor",
        "sys/class/dmi/id/product_name",
    ]
    .iter()
    .filter_map(|f| root.read(f))
    .collect::<Vec<_>>()
    .join(" ");
    let what = if product.is_empty() {
        String::new()
    } else {
        format!(" ({product})")
    };
    CheckResult::warn(
        c,
        format!("running under a hypervisor{what}: /proc/cpuinfo has the hypervisor flag"),
        "publish figures from bare metal: a virtual CPU shares its core with other guests, its \
         clock is the host's business, and it usually has no PMU",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        let mut fields = vec!["0"; 50];
        fields[0] = "R";
        fields[36] = "3";
        let line = format!("42 (a (b) c) {}", fields.join(" "));
        assert_eq!(parse_stat(&line), Some(("a (b) c", 'R', 3)));
        assert_eq!(parse_stat("42 (x) S 1"), None);
    }

    #[test]
    fn cmdline_parameters_and_isolcpus_flags() {
        let cmd = "BOOT_IMAGE=/vmlinuz isolcpus=nohz,domain,2-3 rcu_nocbs quiet -- isolcpus=9";
        assert_eq!(cmdline_param(cmd, "isolcpus"), Some("nohz,domain,2-3"));
        assert_eq!(cmdline_param(cmd, "rcu_nocbs"), Some(""));
        assert_eq!(cmdline_param(cmd, "nohz_full"), None);
        assert_eq!(
            isolcpus_list("nohz,domain,2-3"),
            Some([2, 3].into_iter().collect())
        );
    }
}
