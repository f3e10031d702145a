//! `rxpipe view`: a scene in a window.

use crate::{spinner, PipelineArgs, Res};
use rxpipe::CullMode;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// a scene (.toml), glTF or mesh file, or a generator spec [default: the built-in scene]
    scene: Option<PathBuf>,
    #[command(flatten)]
    pipeline: PipelineArgs,
    #[command(flatten)]
    viewpoint: crate::Viewpoint,
}

pub fn run(a: Args) -> Res {
    let mut scene = match &a.scene {
        Some(path) => {
            a.pipeline.check_spec(path)?;
            let pb = spinner(format!("loading {}", path.display()));
            let scene = rxpipe::io::load_scene(path)?;
            pb.finish_and_clear();
            scene
        }
        None => rxpipe::io::builtin_scene(),
    };
    // (the window's orbit starts there, around the same up axis)
    a.viewpoint.apply(&mut scene);
    let (renderer, pipeline) = a.pipeline.build(&scene, CullMode::Back)?;
    eprintln!("{}", renderer.notice);
    for l in rxpipe_app::noted(scene.notes.iter().chain(&pipeline.notices), "") {
        eprintln!("{l}");
    }
    rxpipe_app::viewer::run(scene, pipeline)?;
    Ok(())
}
