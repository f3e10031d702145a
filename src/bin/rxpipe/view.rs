//! `rxpipe view`: a scene in a window.

use crate::{default_scene, spinner, PipelineArgs, Res};
use rxpipe::{CullMode, Scene};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    scene: Option<PathBuf>,
    #[command(flatten)]
    pipeline: PipelineArgs,
}

pub fn run(a: Args) -> Res {
    let path = a.scene.unwrap_or_else(default_scene);
    let pb = spinner(format!("loading {}", path.display()));
    let scene = Scene::load(&path)?;
    pb.finish_and_clear();
    let (renderer, pipeline) = a.pipeline.build(&scene, CullMode::Back)?;
    eprintln!("{}", renderer.notice);
    for n in &pipeline.notices {
        eprintln!("note: {n}");
    }
    rxpipe::viewer::run(scene, pipeline)?;
    Ok(())
}
