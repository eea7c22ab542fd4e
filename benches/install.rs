//! Install benchmarks, each next to its floor run on the same tree in the
//! same run (run: `cargo bench -p reasonix --bench install`):
//!
//! - `install_10k/reasonix`: `reasonix plugin install <dir> --yes` of a
//!   package of 10 000 small files (plan snapshot, staged copy, digests,
//!   durable publication, registry), into a fresh home each time, beside
//!   `install_10k/cp_sha256sum_floor`: `cp -r` of the same tree plus
//!   `sha256sum` of every copied file;
//! - `install_git/reasonix`: `reasonix plugin install
//!   https://github.com/o/r/tree/main/plugins/big --yes` against a local
//!   bare repository of about 24 MiB (redirected with
//!   `REASONIX_GITHUB_BASE`), beside `install_git/clone_floor`: one
//!   `git clone --depth=1` of the same repository.
//!
//! Both run the real `reasonix` binary, so process start is included on
//! both sides of each ratio (`REASONIX_BENCH_BIN` names another binary, to
//! measure an older build with the same bench). After the criterion groups
//! a table alternates floor and install five times each and prints the
//! medians: on a machine whose disk is busy the two sides of a ratio then
//! see the same disk. The 10 000-file install is also run with `TMPDIR` on
//! a tmpfs (`/dev/shm`), where the approval snapshot creates no disk
//! inodes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::Criterion;

fn reasonix() -> String {
    std::env::var("REASONIX_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_reasonix").into())
}

fn write(path: &Path, text: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn manifest(dir: &Path, name: &str) {
    write(
        &dir.join("reasonix-plugin.json"),
        format!(
            r#"{{"apiVersion": "reasonix.io/plugin/v2", "name": "{name}", "version": "1.0.0",
  "description": "benchmark package", "contributes": {{"skills": ["skills"]}}}}"#
        )
        .as_bytes(),
    );
    write(
        &dir.join("skills/greet/SKILL.md"),
        b"---\nname: greet\ndescription: Say hello\n---\nSay hello.\n",
    );
}

/// Deterministic filler (incompressible enough that git and the page cache
/// do real work).
fn filler(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b'a' + (x % 26) as u8
        })
        .collect()
}

/// A package of 10 000 files of 200–1200 bytes in 100 directories.
fn ten_thousand_files(root: &Path) {
    manifest(root, "tenk");
    for d in 0..100u64 {
        for f in 0..100u64 {
            let n = d * 100 + f;
            write(
                &root.join(format!("data/d{d:03}/f{f:03}.txt")),
                &filler(n, 200 + (n as usize * 37) % 1000),
            );
        }
    }
}

fn run(command: &mut Command) -> Duration {
    let began = Instant::now();
    let out = command.output().expect("run");
    let elapsed = began.elapsed();
    assert!(
        out.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    elapsed
}

fn install(home: &Path, source: &str, github: Option<&str>) -> Command {
    let mut command = Command::new(reasonix());
    command
        .args(["plugin", "install", source, "--yes", "--json"])
        .env("REASONIX_HOME", home);
    if let Some(base) = github {
        command.env("REASONIX_GITHUB_BASE", base);
    }
    command
}

/// One floor run: `cp -r` of `source` plus `sha256sum` of every copy.
fn cp_sha256sum(source: &Path, target: &Path) -> Duration {
    let script = format!(
        "cp -r '{}' '{}' && find '{}' -type f -print0 | xargs -0 sha256sum > /dev/null",
        source.display(),
        target.display(),
        target.display()
    );
    let took = run(Command::new("sh").args(["-c", &script]));
    std::fs::remove_dir_all(target).unwrap();
    took
}

/// One install into a fresh home (removed afterwards).
fn timed_install(
    home: &Path,
    source: &str,
    github: Option<&str>,
    tmpdir: Option<&Path>,
) -> Duration {
    let mut command = install(home, source, github);
    if let Some(tmpdir) = tmpdir {
        command.env("TMPDIR", tmpdir);
    }
    let took = run(&mut command);
    std::fs::remove_dir_all(home).unwrap();
    took
}

fn tmpfs() -> Option<PathBuf> {
    let shm = Path::new("/dev/shm");
    shm.is_dir().then(|| shm.to_path_buf())
}

fn install_10k(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("tenk");
    ten_thousand_files(&source);
    let source_text = source.to_str().unwrap().to_owned();
    let mut g = c.benchmark_group("install_10k");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.bench_function("cp_sha256sum_floor", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|i| cp_sha256sum(&source, &dir.path().join(format!("copy-{i}"))))
                .sum()
        })
    });
    g.bench_function("reasonix", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|i| {
                    timed_install(
                        &dir.path().join(format!("home-{i}")),
                        &source_text,
                        None,
                        None,
                    )
                })
                .sum()
        })
    });
    if let Some(shm) = tmpfs() {
        g.bench_function("reasonix_tmpdir_on_tmpfs", |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|i| {
                        timed_install(
                            &dir.path().join(format!("home-{i}")),
                            &source_text,
                            None,
                            Some(&shm),
                        )
                    })
                    .sum()
            })
        });
    }
    g.finish();
    let (mut floor, mut ours) = (Vec::new(), Vec::new());
    for i in 0..5 {
        floor.push(cp_sha256sum(
            &source,
            &dir.path().join(format!("alt-copy-{i}")),
        ));
        ours.push(timed_install(
            &dir.path().join(format!("alt-home-{i}")),
            &source_text,
            None,
            None,
        ));
    }
    report("install_10k, floor and install alternating", &floor, &ours);
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn report(title: &str, floor: &[Duration], ours: &[Duration]) {
    let (f, o) = (median(floor.to_vec()), median(ours.to_vec()));
    println!(
        "{title}: floor median {:.2} s, reasonix median {:.2} s, ratio {:.2}",
        f.as_secs_f64(),
        o.as_secs_f64(),
        o.as_secs_f64() / f.as_secs_f64()
    );
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=b", "-c", "user.email=b@example.invalid"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `<base>/o/r.git`: about 24 MiB of files, the plugin in `plugins/big`.
fn repository(dir: &Path) -> PathBuf {
    let base = dir.join("github");
    let bare = base.join("o/r.git");
    std::fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "--bare", "-q"]);
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "-q"]);
    for i in 0..240u64 {
        write(
            &work.join(format!("assets/a{i:03}.bin")),
            &filler(i, 100 * 1024),
        );
    }
    manifest(&work.join("plugins/big"), "big");
    for i in 0..50u64 {
        write(
            &work.join(format!("plugins/big/notes/n{i:02}.md")),
            &filler(1000 + i, 2048),
        );
    }
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "content"]);
    git(&work, &["push", "-q", bare.to_str().unwrap(), "HEAD:main"]);
    base
}

/// One floor run: a shallow clone of the bench repository.
fn clone_once(base_url: &str, target: &Path) -> Duration {
    let took = run(Command::new("git").args([
        "clone",
        "--depth=1",
        "--quiet",
        &format!("{base_url}/o/r.git"),
        target.to_str().unwrap(),
    ]));
    std::fs::remove_dir_all(target).unwrap();
    took
}

const TREE_URL: &str = "https://github.com/o/r/tree/main/plugins/big";

fn install_git(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let base = repository(dir.path());
    let base_url = format!("file://{}", base.display());
    let mut g = c.benchmark_group("install_git");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.bench_function("clone_floor", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|i| clone_once(&base_url, &dir.path().join(format!("clone-{i}"))))
                .sum()
        })
    });
    g.bench_function("reasonix", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|i| {
                    timed_install(
                        &dir.path().join(format!("home-{i}")),
                        TREE_URL,
                        Some(&base_url),
                        None,
                    )
                })
                .sum()
        })
    });
    g.finish();
    let (mut floor, mut ours) = (Vec::new(), Vec::new());
    for i in 0..5 {
        floor.push(clone_once(
            &base_url,
            &dir.path().join(format!("alt-clone-{i}")),
        ));
        ours.push(timed_install(
            &dir.path().join(format!("alt-home-{i}")),
            TREE_URL,
            Some(&base_url),
            None,
        ));
    }
    report("install_git, floor and install alternating", &floor, &ours);
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    install_10k(&mut c);
    install_git(&mut c);
    c.final_summary();
}
