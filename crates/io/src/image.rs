//! Image output (PNG, JPEG) and PNG input.

use crate::write_atomically;
use crate::IoError;
use std::path::Path;

/// The formats a frame can be written in, chosen by the output's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Png,
    /// baseline JPEG at quality 92 (no alpha)
    Jpeg,
}

impl ImageFormat {
    /// The format `path`'s extension names (`.png`, `.jpg`, `.jpeg`, any case), or an error that
    /// says which extensions are supported.
    pub fn of(path: &Path) -> Result<ImageFormat, IoError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("png") => Ok(ImageFormat::Png),
            Some("jpg" | "jpeg") => Ok(ImageFormat::Jpeg),
            other => Err(IoError::Image(format!(
                "{}: cannot write {} images; name the output .png or .jpg",
                path.display(),
                match other {
                    Some(e) => format!("'.{e}'"),
                    None => "extension-less".into(),
                }
            ))),
        }
    }
}

/// Writes RGBA8 pixels in the format `path`'s extension names (see [`ImageFormat::of`]); the
/// file appears under its name only when complete.
pub fn save(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), IoError> {
    match ImageFormat::of(path)? {
        ImageFormat::Png => save_png(path, width, height, rgba),
        ImageFormat::Jpeg => write_atomically(path, |w| {
            let rgb: Vec<u8> = rgba
                .chunks_exact(4)
                .flat_map(|p| [p[0], p[1], p[2]])
                .collect();
            image::codecs::jpeg::JpegEncoder::new_with_quality(w, 92)
                .encode(&rgb, width, height, image::ExtendedColorType::Rgb8)
                .map_err(|e| IoError::Image(format!("{}: {e}", path.display())))
        }),
    }
}

/// Writes RGBA8 pixels as a PNG; the file appears under its name only when complete.
pub fn save_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), IoError> {
    write_atomically(path, |w| {
        let name = path.display();
        let mut enc = png::Encoder::new(w, width, height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        // the default level spent half a second on a 1280x720 frame, more than rendering it
        enc.set_compression(png::Compression::Fast);
        let mut w = enc
            .write_header()
            .map_err(|e| IoError::Image(format!("{name}: {e}")))?;
        w.write_image_data(rgba)
            .map_err(|e| IoError::Image(format!("{name}: {e}")))?;
        w.finish()
            .map_err(|e| IoError::Image(format!("{name}: {e}")))?;
        Ok(())
    })
}
/// Reads an RGBA8 or RGB8 PNG (golden images in tests).
pub fn load_png(path: &Path) -> Result<(u32, u32, Vec<u8>), IoError> {
    let name = path.display().to_string();
    let f = std::fs::File::open(path).map_err(IoError::at(path))?;
    let dec = png::Decoder::new(std::io::BufReader::new(f));
    let mut r = dec
        .read_info()
        .map_err(|e| IoError::Image(format!("{name}: {e}")))?;
    let mut buf = vec![0; r.output_buffer_size().unwrap_or(0)];
    let info = r
        .next_frame(&mut buf)
        .map_err(|e| IoError::Image(format!("{name}: {e}")))?;
    buf.truncate(info.buffer_size());
    let rgba = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks_exact(3)
            .flat_map(|c| [c[0], c[1], c[2], 255])
            .collect(),
        other => {
            return Err(IoError::Image(format!(
                "{name}: unsupported colour type {other:?}"
            )))
        }
    };
    Ok((info.width, info.height, rgba))
}
