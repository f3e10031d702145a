#[path = "../../tests/common/mod.rs"]
mod common;
mod program;

use common::surface::{diagonal, roughen, sampled_distance};

#[test]
fn the_command_line_lists_the_stage_and_renders_with_it() {
    let exe = program::rxpipe_exe();
    let o = std::process::Command::new(&exe)
        .arg("passes")
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&o.stdout);
    assert!(
        listed.contains("simplify (mesh stage; backends: cpu") && listed.contains("eps="),
        "{listed}"
    );
    let dir = common::tmp_dir("simplify-cli");
    let out = dir.join("ball.png");
    let o = std::process::Command::new(&exe)
        .args(["render", "icosphere:4", "--backend", "cpu", "--pass"])
        .args([
            "simplify:eps=0.01",
            "--width",
            "64",
            "--height",
            "48",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{said}");
    assert!(
        said.contains("stage simplify (cpu)") && said.contains("5120 -> "),
        "{said}"
    );
    assert!(out.is_file());
    let o = std::process::Command::new(&exe)
        .args([
            "render",
            "icosphere:2",
            "--backend",
            "cpu",
            "--pass",
            "simplify:eps=3",
        ])
        .arg("--out")
        .arg(dir.join("never.png"))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("eps=3") && e.contains("at most 1"), "{e}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn the_simplify_tool_writes_a_mesh_and_spares_existing_files() {
    let exe = program::rxpipe_exe();
    let dir = common::tmp_dir("simplify-tool");
    let input = dir.join("ball.obj");
    let m = roughen(rxpipe::mesh::icosphere(4), 0.02, 9);
    rxpipe::io::save_mesh(&m, &input).unwrap();
    let out = dir.join("small.ply");
    let run = |args: &[&str]| {
        let o = std::process::Command::new(&exe)
            .arg("simplify")
            .args(args)
            .output()
            .unwrap();
        let said =
            String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
        (o.status.code(), said)
    };
    let (input_s, out_s) = (input.to_str().unwrap(), out.to_str().unwrap());
    let (code, said) = run(&[input_s, out_s, "--eps", "0.01"]);
    assert_eq!(code, Some(0), "{said}");
    let written = rxpipe::io::load_mesh(&out).unwrap();
    assert!(written.triangle_count() * 2 < m.triangle_count(), "{said}");
    assert!(
        said.contains(&format!("{} triangles", written.triangle_count())),
        "{said}"
    );
    // the promise holds for what was written
    let eps = 0.01 * diagonal(&m);
    assert!(sampled_distance(&written, &m) <= eps * (1.0 + 1e-6));
    assert!(sampled_distance(&m, &written) <= eps * (1.0 + 1e-6));
    // an existing file needs --force; an input never is an output
    let (code, said) = run(&[input_s, out_s]);
    assert_eq!(code, Some(1));
    assert!(said.contains("--force"), "{said}");
    let (code, said) = run(&[input_s, input_s, "--force"]);
    assert_eq!(code, Some(1));
    assert!(said.contains("is an input"), "{said}");
    assert_eq!(
        rxpipe::io::load_mesh(&input).unwrap().triangle_count(),
        5120
    );
    let (code, said) = run(&[input_s, out_s, "--force", "--target", "2"]);
    assert_eq!(code, Some(1));
    assert!(said.contains("target=2"), "{said}");
    std::fs::remove_dir_all(dir).ok();
}
