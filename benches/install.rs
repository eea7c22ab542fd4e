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
//! both sides of each ratio.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::Criterion;

const REASONIX: &str = env!("CARGO_BIN_EXE_reasonix");

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
    let mut command = Command::new(REASONIX);
    command
        .args(["plugin", "install", source, "--yes", "--json"])
        .env("REASONIX_HOME", home);
    if let Some(base) = github {
        command.env("REASONIX_GITHUB_BASE", base);
    }
    command
}

fn install_10k(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("tenk");
    ten_thousand_files(&source);
    let mut g = c.benchmark_group("install_10k");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.bench_function("cp_sha256sum_floor", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in 0..iters {
                let target = dir.path().join(format!("copy-{i}"));
                let script = format!(
                    "cp -r '{}' '{}' && find '{}' -type f -print0 | xargs -0 sha256sum > /dev/null",
                    source.display(),
                    target.display(),
                    target.display()
                );
                total += run(Command::new("sh").args(["-c", &script]));
                std::fs::remove_dir_all(&target).unwrap();
            }
            total
        })
    });
    g.bench_function("reasonix", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in 0..iters {
                let home = dir.path().join(format!("home-{i}"));
                total += run(&mut install(&home, source.to_str().unwrap(), None));
                std::fs::remove_dir_all(&home).unwrap();
            }
            total
        })
    });
    g.finish();
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

fn install_git(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let base = repository(dir.path());
    let base_url = format!("file://{}", base.display());
    let mut g = c.benchmark_group("install_git");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.bench_function("clone_floor", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in 0..iters {
                let target = dir.path().join(format!("clone-{i}"));
                total += run(Command::new("git").args([
                    "clone",
                    "--depth=1",
                    "--quiet",
                    &format!("{base_url}/o/r.git"),
                    target.to_str().unwrap(),
                ]));
                std::fs::remove_dir_all(&target).unwrap();
            }
            total
        })
    });
    g.bench_function("reasonix", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in 0..iters {
                let home = dir.path().join(format!("home-{i}"));
                total += run(&mut install(
                    &home,
                    "https://github.com/o/r/tree/main/plugins/big",
                    Some(&base_url),
                ));
                std::fs::remove_dir_all(&home).unwrap();
            }
            total
        })
    });
    g.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    install_10k(&mut c);
    install_git(&mut c);
    c.final_summary();
}
