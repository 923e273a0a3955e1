//! Getting pictures onto the array: loading, grey conversion and resizing to 256x256.

use super::dims::N;
use std::path::Path;

/// The default scene: `images/camera.png`, built into the binary so `scamp run` works
/// from any directory.
pub(crate) const DEFAULT_IMAGE: &[u8] = include_bytes!("../../images/camera.png");

/// Name of the built-in default image, for messages.
pub const DEFAULT_IMAGE_NAME: &str = "images/camera.png";

/// A 256x256 8-bit grey picture, row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GreyImage {
    /// 65,536 pixel values.
    pub pixels: Vec<u8>,
    /// Size of the file before resizing, when it was not 256x256.
    pub resized_from: Option<(u32, u32)>,
}

/// Why a picture could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("{path}: cannot load image: {cause}")]
pub struct CaptureError {
    /// The file.
    pub(crate) path: String,
    /// What went wrong.
    pub(crate) cause: CaptureCause,
}

/// What went wrong loading a picture.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CaptureCause {
    /// The file could not be opened or read.
    #[error(transparent)]
    Read(#[from] std::io::Error),
    /// The file is not a picture the decoder reads.
    #[error(transparent)]
    Decode(#[from] image::ImageError),
}

fn from_dynamic(img: image::DynamicImage) -> GreyImage {
    let grey = img.to_luma8();
    let (w, h) = grey.dimensions();
    if (w, h) == (N as u32, N as u32) {
        return GreyImage {
            pixels: grey.into_raw(),
            resized_from: None,
        };
    }
    let resized = image::imageops::resize(
        &grey,
        N as u32,
        N as u32,
        image::imageops::FilterType::Triangle,
    );
    GreyImage {
        pixels: resized.into_raw(),
        resized_from: Some((w, h)),
    }
}

/// Loads PNG, JPEG or PGM/PPM, converts to grey and resizes to 256x256.
pub fn load(path: &Path) -> Result<GreyImage, CaptureError> {
    let err = |cause: CaptureCause| CaptureError {
        path: path.display().to_string(),
        cause,
    };
    let reader = image::ImageReader::open(path)
        .map_err(|e| err(e.into()))?
        .with_guessed_format()
        .map_err(|e| err(e.into()))?;
    Ok(from_dynamic(reader.decode().map_err(|e| err(e.into()))?))
}

/// The built-in default image.
pub fn default_image() -> GreyImage {
    let img = image::load_from_memory(DEFAULT_IMAGE)
        .expect("the bundled default image is a valid PNG (checked by tests)");
    from_dynamic(img)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_image_is_256_grey() {
        let img = default_image();
        assert_eq!(img.pixels.len(), N * N);
        assert_eq!(img.resized_from, None);
    }

    #[test]
    fn unreadable_files_are_errors_by_kind() {
        let e = load(Path::new("Cargo.toml")).unwrap_err();
        assert!(e.to_string().starts_with("Cargo.toml: cannot load image: "));
        assert!(matches!(e.cause, CaptureCause::Decode(_)), "{e:?}");
        let e = load(Path::new("no/such/file.png")).unwrap_err();
        assert!(matches!(e.cause, CaptureCause::Read(_)), "{e:?}");
        // The cause's own text follows, as the operating system says it.
        let os = std::fs::File::open("no/such/file.png").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("no/such/file.png: cannot load image: {os}")
        );
    }
}
