//! Putting a finished RGBA8 frame on the window. rxpipe renders in software, so presenting needs
//! no particular GPU API: the window tries, in order, wgpu's primary backends (Vulkan, Metal,
//! DX12) through `pixels`, wgpu's OpenGL backend, and last a plain software surface
//! (`softbuffer`: X11 shared memory, Wayland shared memory, Win32 GDI), which every window
//! system has. What it uses is said once, when the window opens.

use pixels::{Pixels, PixelsBuilder, SurfaceTexture};
use rxpipe::Error;
use std::num::NonZeroU32;
use std::sync::Arc;
use winit::window::Window;

/// A window's way of showing frames, with the frame buffer the next frame is written into
/// (RGBA8, width x height).
pub enum Presenter {
    Wgpu(Box<Pixels<'static>>),
    Software(Box<Software>),
}

/// A software surface and the RGBA frame converted into it at each present.
pub struct Software {
    _context: softbuffer::Context<Arc<Window>>,
    surface: softbuffer::Surface<Arc<Window>, Arc<Window>>,
    rgba: Vec<u8>,
}

impl Presenter {
    /// The first way that works on `window` of `w` x `h` pixels, and a line saying which (and
    /// why the ones before it did not).
    pub fn new(window: Arc<Window>, w: u32, h: u32) -> Result<(Presenter, String), Error> {
        let mut why = Vec::new();
        for (name, backends) in [
            (
                "wgpu (Vulkan, Metal or DX12)",
                pixels::wgpu::Backends::PRIMARY,
            ),
            ("wgpu (OpenGL)", pixels::wgpu::Backends::GL),
        ] {
            let surface = SurfaceTexture::new(w, h, window.clone());
            match PixelsBuilder::new(w, h, surface)
                .wgpu_backend(backends)
                .build()
            {
                Ok(p) => {
                    return Ok((
                        Presenter::Wgpu(Box::new(p)),
                        format!("window: presenting through {name}"),
                    ));
                }
                Err(e) => why.push(format!("{name}: {e}")),
            }
        }
        let software = Software::new(window, w, h).map_err(|e| {
            why.push(format!("a software surface: {e}"));
            Error::Backend(format!(
                "cannot present to the window ({}); use `rxpipe render SCENE --out image.png`",
                why.join("; ")
            ))
        })?;
        Ok((
            Presenter::Software(Box::new(software)),
            format!(
                "window: presenting through a software surface (no GPU API is needed: {})",
                why.join("; ")
            ),
        ))
    }

    /// The buffer the next frame is written into: RGBA8, row after row.
    pub fn frame_mut(&mut self) -> &mut [u8] {
        match self {
            Presenter::Wgpu(p) => p.frame_mut(),
            Presenter::Software(s) => &mut s.rgba,
        }
    }

    /// The window's new size in pixels (neither zero).
    pub fn resize(&mut self, w: u32, h: u32) -> Result<(), Error> {
        let failed = |e: String| Error::Backend(format!("window resize failed: {e}"));
        match self {
            Presenter::Wgpu(p) => {
                p.resize_surface(w, h).map_err(|e| failed(e.to_string()))?;
                p.resize_buffer(w, h).map_err(|e| failed(e.to_string()))
            }
            Presenter::Software(s) => s.resize(w, h).map_err(failed),
        }
    }

    /// Shows the frame buffer on the window.
    pub fn present(&mut self) -> Result<(), Error> {
        match self {
            Presenter::Wgpu(p) => p
                .render()
                .map_err(|e| Error::Backend(format!("window: {e}"))),
            Presenter::Software(s) => s
                .present()
                .map_err(|e| Error::Backend(format!("window: {e}"))),
        }
    }
}

impl Software {
    fn new(window: Arc<Window>, w: u32, h: u32) -> Result<Software, String> {
        let context = softbuffer::Context::new(window.clone()).map_err(|e| e.to_string())?;
        let surface = softbuffer::Surface::new(&context, window).map_err(|e| e.to_string())?;
        let mut s = Software {
            _context: context,
            surface,
            rgba: Vec::new(),
        };
        s.resize(w, h)?;
        Ok(s)
    }

    fn resize(&mut self, w: u32, h: u32) -> Result<(), String> {
        let (Some(nw), Some(nh)) = (NonZeroU32::new(w), NonZeroU32::new(h)) else {
            return Ok(());
        };
        self.surface.resize(nw, nh).map_err(|e| e.to_string())?;
        self.rgba = vec![0; 4 * w as usize * h as usize];
        Ok(())
    }

    /// The RGBA frame as the surface's 0RGB words, then shown.
    fn present(&mut self) -> Result<(), String> {
        let mut buffer = self.surface.buffer_mut().map_err(|e| e.to_string())?;
        for (word, px) in buffer.iter_mut().zip(self.rgba.chunks_exact(4)) {
            *word = (px[0] as u32) << 16 | (px[1] as u32) << 8 | px[2] as u32;
        }
        buffer.present().map_err(|e| e.to_string())
    }
}
