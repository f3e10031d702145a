//! PNG output.

use crate::Error;
use std::path::Path;

/// Writes RGBA8 pixels as a PNG; the file appears under its name only when complete.
pub fn save_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), Error> {
    let name = path.display().to_string();
    let io = |e: std::io::Error| {
        Error::Io(crate::io::IoError::Io {
            file: name.clone(),
            source: e,
        })
    };
    let tmp = path.with_extension("png.rxpipe-tmp");
    let result = (|| -> Result<(), Error> {
        let f = std::fs::File::create(&tmp).map_err(io)?;
        let mut enc = png::Encoder::new(std::io::BufWriter::new(f), width, height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc
            .write_header()
            .map_err(|e| Error::Image(format!("{name}: {e}")))?;
        w.write_image_data(rgba)
            .map_err(|e| Error::Image(format!("{name}: {e}")))?;
        w.finish()
            .map_err(|e| Error::Image(format!("{name}: {e}")))?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, path).map_err(io)
}

/// Reads an RGBA8 or RGB8 PNG (golden images in tests).
pub fn load_png(path: &Path) -> Result<(u32, u32, Vec<u8>), Error> {
    let name = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| {
        Error::Io(crate::io::IoError::Io {
            file: name.clone(),
            source: e,
        })
    })?;
    let dec = png::Decoder::new(std::io::BufReader::new(f));
    let mut r = dec
        .read_info()
        .map_err(|e| Error::Image(format!("{name}: {e}")))?;
    let mut buf = vec![0; r.output_buffer_size().unwrap_or(0)];
    let info = r
        .next_frame(&mut buf)
        .map_err(|e| Error::Image(format!("{name}: {e}")))?;
    buf.truncate(info.buffer_size());
    let rgba = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks_exact(3)
            .flat_map(|c| [c[0], c[1], c[2], 255])
            .collect(),
        other => {
            return Err(Error::Image(format!(
                "{name}: unsupported colour type {other:?}"
            )))
        }
    };
    Ok((info.width, info.height, rgba))
}
