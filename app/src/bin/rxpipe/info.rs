//! `rxpipe info`: version, backend, CUDA device and NVRTC.

use crate::Res;
use rxpipe::{Backend, Renderer};

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Res {
    let cuda = rxpipe::gpu::probe();
    let renderer = Renderer::new(Backend::Auto)?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "version": env!("CARGO_PKG_VERSION"),
                "backend": renderer.kind(),
                "backend_notice": renderer.notice,
                "cuda": cuda,
                "kernel_cache": rxpipe::gpu::cache::default_dir(),
                "threads": rayon::current_num_threads(),
            }))?
        );
    } else {
        println!("rxpipe {}", env!("CARGO_PKG_VERSION"));
        println!("{}", renderer.notice);
        println!("CPU threads: {}", rayon::current_num_threads());
        print!("{cuda}");
        match rxpipe::gpu::cache::default_dir() {
            Some(d) => println!("Kernel cache:        {}", d.display()),
            None => println!("Kernel cache:        none (set RXPIPE_CACHE_DIR or HOME)"),
        }
    }
    Ok(())
}
