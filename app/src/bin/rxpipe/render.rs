//! `rxpipe render`: a scene to a PNG or JPEG file, with every stage's report.

use crate::{spinner, PipelineArgs, Res};
use rxpipe::CullMode;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// a scene (.toml), glTF or mesh file, or a generator spec (icosphere:LEVEL, torus:N, ...)
    scene: PathBuf,
    /// the image to write: .png, or .jpg / .jpeg
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = 1280)]
    width: u32,
    #[arg(long, default_value_t = 720)]
    height: u32,
    #[command(flatten)]
    pipeline: PipelineArgs,
    #[arg(long, value_parser = rxpipe_app::named::<CullMode>(), default_value = "back")]
    cull: CullMode,
    /// print the frame's statistics and every stage's report as JSON
    #[arg(long)]
    json: bool,
    /// overwrite the output file if it exists
    #[arg(long)]
    force: bool,
    /// the moment of the scene's glTF animations to draw, in seconds (each holds its last key
    /// after its end)
    #[arg(long, default_value_t = 0.0, value_name = "SECONDS", value_parser = seconds)]
    time: f32,
    /// the glTF file's camera to draw from, counted from 0 in the order the file's nodes are met
    /// (0 is the view it starts from)
    #[arg(long, value_name = "INDEX", conflicts_with_all = ["up", "azimuth", "elevation"])]
    camera: Option<usize>,
    #[command(flatten)]
    viewpoint: crate::Viewpoint,
}

/// A finite number of seconds.
fn seconds(s: &str) -> Result<f32, String> {
    crate::finite(s, "seconds")
}

pub fn run(a: Args) -> Res {
    // before any work: a format we write, never over the scene, nor over an existing file
    // without --force; once loaded, never over any file the scene was read from
    rxpipe::image::ImageFormat::of(&a.out)?;
    crate::check_output(&a.out, &[&a.scene], a.force)?;
    a.pipeline.check_spec(&a.scene)?;
    let pb = spinner(format!("loading {}", a.scene.display()));
    let mut scene = rxpipe::io::load_scene(&a.scene)?;
    if let Some(k) = a.camera {
        scene.camera = *scene.cameras.get(k).ok_or_else(|| {
            format!(
                "{}: --camera {k}, but the scene offers {} camera(s){}",
                a.scene.display(),
                scene.cameras.len(),
                match scene.cameras.len() {
                    0 => " (only a glTF file's perspective cameras are offered)".to_string(),
                    n => format!(": 0 to {}", n - 1),
                }
            )
        })?;
    }
    a.viewpoint.apply(&mut scene);
    // (the sources hold the files the scene's files refer to: not looked for again)
    let sources: Vec<&std::path::Path> = scene.sources.iter().map(|p| p.as_path()).collect();
    crate::check_output_files(&a.out, &sources, a.force)?;
    // skinned meshes take the pose of the moment drawn (node animation is the frame's)
    scene.pose_meshes(a.time);
    let (renderer, pipeline) = a.pipeline.build(&scene, a.cull)?;
    pb.set_message(format!("preparing {} triangles", scene.triangle_count()));
    let prepared = pipeline.prepare(&scene)?;
    pb.set_message(format!("rendering {} triangles", scene.triangle_count()));
    let size = (a.width, a.height);
    let mut frame = pipeline.render_prepared(&prepared, &scene, &scene.camera, size, a.time)?;
    // (the frame's own notes first, such as why nothing was drawn; then what loading left out)
    frame.notes.extend(scene.notes.iter().cloned());
    if !scene.animation.is_empty() {
        frame.notes.push(format!(
            "the scene's {} animation(s) ({:.2} s) are drawn at {} s: --time picks another moment; `rxpipe view` plays them",
            scene.animation.clips(),
            scene.animation.duration(),
            a.time
        ));
    }
    frame.notes.extend(prepared.reindex_notes());
    pb.finish_and_clear();
    frame.save(&a.out)?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "backend": renderer.kind(),
                "backend_notice": renderer.notice,
                "mesh_stages": prepared.stages,
                "frame": frame.stats,
                "notes": frame.notes,
            }))?
        );
    } else {
        eprintln!("{}", renderer.notice);
        for l in rxpipe_app::noted(&pipeline.notices, "") {
            eprintln!("{l}");
        }
        for l in prepared.stage_summary() {
            eprintln!("{l}");
        }
        println!("{}: {}", a.out.display(), frame.stats);
    }
    let more = if a.json {
        ""
    } else {
        " (--json lists them all)"
    };
    for l in rxpipe_app::noted(&frame.notes, more) {
        eprintln!("{l}");
    }
    Ok(())
}
