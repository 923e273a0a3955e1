//! The pictures built into the library: the repository's test images (the ones `scamp
//! check` measures on by default), so the playground and the Python package work from any
//! directory.

use crate::sim::capture::GreyImage;
use crate::sim::N;

/// Name and PNG bytes of every image in images/, sorted by name as `scamp check`
/// loads them.
pub(crate) const BUNDLED: [(&str, &[u8]); 8] = [
    ("astronaut", include_bytes!("../../images/astronaut.png")),
    ("brick", include_bytes!("../../images/brick.png")),
    ("camera", include_bytes!("../../images/camera.png")),
    (
        "checkerboard",
        include_bytes!("../../images/checkerboard.png"),
    ),
    ("chelsea", include_bytes!("../../images/chelsea.png")),
    ("coffee", include_bytes!("../../images/coffee.png")),
    ("gradient", include_bytes!("../../images/gradient.png")),
    ("gravel", include_bytes!("../../images/gravel.png")),
];

/// The bundled image `name`, grey, 256x256; `None` for an unknown name.
pub fn image(name: &str) -> Option<GreyImage> {
    let (_, bytes) = BUNDLED.iter().find(|(n, _)| *n == name)?;
    let grey = image::load_from_memory(bytes).ok()?.to_luma8();
    let pixels = grey.into_raw();
    (pixels.len() == N * N).then_some(GreyImage {
        pixels,
        resized_from: None,
    })
}

/// Every bundled image, in name order.
pub fn all() -> Vec<(String, GreyImage)> {
    BUNDLED
        .iter()
        .filter_map(|(n, _)| Some((n.to_string(), image(n)?)))
        .collect()
}

/// The names of the bundled images.
pub fn names() -> Vec<&'static str> {
    BUNDLED.iter().map(|(n, _)| *n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_bundle_is_the_image_folder_as_check_loads_it() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../images");
        let from_disk = crate::verify::check::load_images(&dir).unwrap();
        assert_eq!(all(), from_disk);
    }
}
