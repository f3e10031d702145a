//! Where and how finely work runs: the backend a user asks for ([`Backend`]), the one that ran a
//! stage ([`BackendKind`]), and the sizes below which a mesh's work stays where it is. Plain
//! values every layer may name (the backends themselves are a layer above).

/// Below this many indices a mesh that is on the host is processed there, whatever the backend:
/// its mesh stages run on the CPU and the CUDA backend builds its batches on the CPU, because
/// handing a small mesh to the thread pool or the GPU costs more than the work (a scene of
/// thousands of small objects would spend its time starting work, not doing it).
pub const SMALL_MESH_INDICES: usize = 16_384;

/// The fewest elements (vertices, triangles) a parallel loop over a mesh hands a thread: a small
/// mesh's loop runs where it is called instead of waking idle threads for a few elements each,
/// which with many threads costs more than the work.
pub const GRAIN: usize = 4096;

/// The index of the first element of `items` for which `bad` holds, searched in parallel in
/// chunks of [`SEARCH_CHUNK`]: each chunk is a plain sequential scan (which the compiler can
/// vectorise), and the first chunk with a match names it. (A per-element parallel search such
/// as rayon's `position_first` pays for its bookkeeping on every element: over a mesh's
/// billions of indices, tens of times the scan itself.)
pub fn position_first<T: Sync>(items: &[T], bad: impl Fn(&T) -> bool + Sync) -> Option<usize> {
    use rayon::prelude::*;
    if items.len() <= SEARCH_CHUNK {
        return items.iter().position(bad);
    }
    items
        .par_chunks(SEARCH_CHUNK)
        .enumerate()
        .find_map_first(|(c, chunk)| chunk.iter().position(&bad).map(|i| c * SEARCH_CHUNK + i))
}

/// The elements one task of [`position_first`] scans.
pub const SEARCH_CHUNK: usize = 1 << 16;

/// Where stages should run, as a user asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// CUDA when a device and NVRTC load, otherwise the CPU (and it says why)
    #[default]
    Auto,
    /// the CPU reference (rayon)
    Cpu,
    /// the CUDA backend; an error when no device or NVRTC can be used
    Cuda,
}

impl Backend {
    /// Parses `auto`, `cpu`, `cuda` (or `gpu`).
    pub fn parse(s: &str) -> Option<Backend> {
        Some(match s.to_ascii_lowercase().as_str() {
            "auto" => Backend::Auto,
            "cpu" => Backend::Cpu,
            "cuda" | "gpu" => Backend::Cuda,
            _ => return None,
        })
    }
}

impl crate::named::Named for Backend {
    const NAMES: &'static [&'static [&'static str]] = &[&["auto"], &["cpu"], &["cuda", "gpu"]];
    fn from_name(name: &str) -> Option<Backend> {
        Backend::parse(name)
    }
}

/// The backend that ran a stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// the CPU reference
    Cpu,
    /// CUDA through cudarc and NVRTC
    Cuda,
}

impl BackendKind {
    /// The backend's name: `cpu` or `cuda`.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Cuda => "cuda",
        }
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One step of a stage and its wall time in milliseconds.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StepTime {
    pub step: String,
    pub ms: f64,
}

/// Times the steps of a stage: each [`Steps::done`] records the time since the last.
#[derive(Debug)]
pub struct Steps {
    last: std::time::Instant,
    pub list: Vec<StepTime>,
}

impl Default for Steps {
    fn default() -> Steps {
        Steps {
            last: std::time::Instant::now(),
            list: Vec::new(),
        }
    }
}

impl Steps {
    /// Records step `step` as taking the time since the last step (or since the start).
    pub fn done(&mut self, step: &str) {
        let now = std::time::Instant::now();
        self.list.push(StepTime {
            step: step.into(),
            ms: (now - self.last).as_secs_f64() * 1e3,
        });
        self.last = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_first_names_the_first_match_in_any_chunk() {
        let n = 5 * SEARCH_CHUNK + 17;
        let mut v = vec![0u32; n];
        assert_eq!(position_first(&v, |&x| x != 0), None);
        // matches in several chunks, the first past a chunk boundary: the lowest is named
        for i in [4 * SEARCH_CHUNK + 3, SEARCH_CHUNK + 1, 3 * SEARCH_CHUNK] {
            v[i] = 1;
        }
        assert_eq!(position_first(&v, |&x| x != 0), Some(SEARCH_CHUNK + 1));
        // a slice shorter than a chunk is scanned as it is
        assert_eq!(
            position_first(&v[..SEARCH_CHUNK + 2], |&x| x != 0),
            Some(SEARCH_CHUNK + 1)
        );
        assert_eq!(position_first(&[1u8, 2, 3], |&x| x == 3), Some(2));
    }
}
