//! Softmax regression: one dense layer trained on the softmax cross-entropy.

use super::rng::SplitMix;
use super::Dense;
use crate::eval::dataset::CLASSES;
use crate::eval::network::TrainParams;

/// Trains one layer from `features` inputs to the class scores on `x` (row-major) and
/// labels `y`.
pub(super) fn train(x: &[f32], y: &[u8], features: usize, p: &TrainParams) -> Dense {
    let w = features + 1;
    let mut head = Dense::zeros(features, CLASSES);
    let mut velocity = vec![0.0f32; CLASSES * w];
    let mut grad = vec![0.0f32; CLASSES * w];
    let mut order: Vec<usize> = (0..y.len()).collect();
    let mut rng = SplitMix(p.seed);
    for epoch in 0..p.epochs {
        rng.shuffle(&mut order);
        // A step size that shrinks over the epochs settles the weights.
        let lr = (p.learning_rate / (1.0 + f64::from(epoch) * 0.3)) as f32;
        for batch in order.chunks(p.batch) {
            grad.fill(0.0);
            for &i in batch {
                let xi = &x[i * features..(i + 1) * features];
                let s = head.apply(xi);
                let m = s.iter().copied().fold(f32::MIN, f32::max);
                let e: Vec<f32> = s.iter().map(|v| (v - m).exp()).collect();
                let z: f32 = e.iter().sum();
                for k in 0..CLASSES {
                    let d = e[k] / z - f32::from(u8::from(usize::from(y[i]) == k));
                    let g = &mut grad[k * w..(k + 1) * w];
                    for (gj, xj) in g.iter_mut().zip(xi) {
                        *gj += d * xj;
                    }
                    g[features] += d;
                }
            }
            let scale = 1.0 / batch.len() as f32;
            let l2 = p.l2 as f32;
            for ((wv, v), g) in head.weights.iter_mut().zip(&mut velocity).zip(&grad) {
                *v = 0.9 * *v - lr * (g * scale + l2 * *wv);
                *wv += *v;
            }
        }
    }
    head
}
