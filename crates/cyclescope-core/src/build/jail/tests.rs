use super::*;

#[test]
fn the_prefix_of_a_named_compiler_is_above_its_bin_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("bin")).unwrap();
    let cc = dir.path().join("bin/mycc");
    std::fs::write(&cc, "").unwrap();
    let want = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(install_prefix(cc.to_str().unwrap()), Some(want));
    assert_eq!(install_prefix("no-such-compiler-here"), None);
}

/// `sh -c script` run in the jail, reading beneath `tree`, writing beneath `out`.
fn jailed(script: &str, tree: &Path, out: &Path) -> (bool, String) {
    let jail = Jail::for_this_process("sh", 256, Duration::from_secs(30));
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", script]);
    let _group = jail
        .confine(&mut cmd, &[tree.to_path_buf()], &[out.to_path_buf()])
        .unwrap();
    let o = cmd.output().unwrap();
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    (o.status.success(), text)
}

#[test]
fn the_jail_drops_privileges_and_limits_memory_reads_and_writes() {
    use std::os::unix::fs::PermissionsExt;
    let tree = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(tree.path().join("in.h"), "inside").unwrap();
    std::fs::write(elsewhere.path().join("secret"), "outside").unwrap();
    // Root's compiler is another user: the tree is open to all, the output folder its
    // own, and a file of mode 0600 in the tree is root's alone.
    let mode =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    mode(tree.path(), 0o755);
    mode(&tree.path().join("in.h"), 0o644);
    std::fs::write(tree.path().join("root-only.h"), "mine").unwrap();
    mode(&tree.path().join("root-only.h"), 0o600);
    let identity = Identity::for_workers();
    if let Some(id) = identity {
        id.hand_over(out.path()).unwrap();
    }
    // Seen from outside: the jail hides /proc from the jailed process itself.
    let jail = Jail::for_this_process("sleep", 256, Duration::from_secs(30));
    let mut cmd = std::process::Command::new("sleep");
    cmd.arg("30");
    let group = jail
        .confine(&mut cmd, &[], &[out.path().to_path_buf()])
        .unwrap();
    let mut child = cmd.spawn().unwrap();
    let proc = format!("/proc/{}", child.id());
    let status = std::fs::read_to_string(format!("{proc}/status")).unwrap();
    let limits = std::fs::read_to_string(format!("{proc}/limits")).unwrap();
    let groups = std::fs::read_to_string(format!("{proc}/cgroup")).unwrap();
    let net = std::fs::read_link(format!("{proc}/ns/net")).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(status.contains("CapEff:\t0000000000000000"), "{status}");
    let uid = jail.runs_as().uid();
    assert!(
        status.contains(&format!("Uid:\t{uid}\t{uid}\t{uid}\t{uid}")),
        "{status}"
    );
    assert_eq!(identity.is_some(), nix::unistd::geteuid().is_root());
    if let Some(id) = identity {
        assert!(id.uid != 0 && uid == id.uid, "{status}");
    }
    assert!(status.contains("NoNewPrivs:\t1"), "{status}");
    let line = |name: &str| {
        limits
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or("")
            .to_string()
    };
    assert!(line("Max cpu time").contains("30"), "{limits}");
    // Root on a machine with cgroups (CI) puts every compiler run in a group of its own.
    if nix::unistd::geteuid().is_root() && Path::new("/sys/fs/cgroup").exists() {
        assert!(jail.cgroup, "{:?}", jail.gaps());
    }
    if let Some(group) = &group.cgroup {
        let name = group.name().unwrap();
        assert!(groups.contains(&name), "{groups}");
        assert_eq!(group.memory_limit(), Some(256 << 20));
    }
    drop(group);
    // Whatever bounds it, a jailed program asking for 512 MiB of 256 does not get them.
    let hog = "awk 'BEGIN { s = \"x\"; for (i = 0; i < 29; i++) s = s s; print length(s) }'";
    let (ok, text) = jailed(hog, tree.path(), out.path());
    assert!(!ok && !text.contains("536870912"), "{text}");
    // RLIMIT_AS as the jailed process sees it (`ulimit -v`, KiB): required where no group
    // bounds the compiler. Where one does, the group's limit is the bound that counts: a
    // fresh CI machine was seen running jailed processes with RLIMIT_AS unlimited though
    // the hook had set it (never outside CI), and the hog above failed all the same.
    let (ok, text) = jailed("ulimit -v", tree.path(), out.path());
    let rlimit_held = ok && text.trim() == (256u64 << 10).to_string();
    assert!(rlimit_held || jail.cgroup, "{text}\n{limits}");
    if jail.new_network {
        assert_ne!(net, std::fs::read_link("/proc/self/ns/net").unwrap());
        // Its /tmp is its own: a file anyone may see in the engine's is not there.
        let planted = tempfile::Builder::new().tempfile_in("/tmp").unwrap();
        let look = format!(
            "test -e {} && echo seen || echo hidden",
            planted.path().display()
        );
        let (ok, text) = jailed(&look, tree.path(), out.path());
        assert!(ok && text == "hidden\n", "{text}");
    }
    let read = format!(
        "cat {}/in.h && echo x > {}/o && cat {}/o",
        tree.path().display(),
        out.path().display(),
        out.path().display()
    );
    let (ok, text) = jailed(&read, tree.path(), out.path());
    assert!(ok && text == "insidex\n", "{text}");
    // Root's own file inside the readable tree: open to a compiler of root's uid only.
    let (ok, text) = jailed(
        &format!("cat {}/root-only.h", tree.path().display()),
        tree.path(),
        out.path(),
    );
    if identity.is_some() {
        assert!(!ok && text.contains("Permission denied"), "{text}");
        assert!(!text.contains("mine"), "{text}");
    } else {
        assert!(ok && text == "mine", "{text}");
    }
    let jail = Jail::for_this_process("sh", 256, Duration::from_secs(30));
    if !jail.landlock {
        return;
    }
    let secret = elsewhere.path().join("secret");
    let (ok, text) = jailed(
        &format!("cat {}", secret.display()),
        tree.path(),
        out.path(),
    );
    assert!(!ok && !text.contains("outside"), "{text}");
    let write = format!("echo x > {}/w", elsewhere.path().display());
    assert!(!jailed(&write, tree.path(), out.path()).0);
    assert!(!jailed("cat /etc/hostname", tree.path(), out.path()).0);
}
