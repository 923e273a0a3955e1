//! An MLP head: dense layers with ReLU between them, trained by backpropagation of
//! the softmax cross-entropy (mini-batch gradient descent with momentum and an L2
//! penalty, the step size shrinking over the epochs, as [`super::softmax`]).

use super::rng::SplitMix;
use super::{Dense, Head};
use crate::eval::dataset::CLASSES;
use crate::eval::network::TrainParams;

/// Trains layers `features -> hidden[0] -> ... -> CLASSES` on `x` (row-major) and
/// labels `y`. Weights start uniform in +-sqrt(6 / inputs) (He's initialisation for
/// ReLU) from the seed, biases at 0.
pub(super) fn train(
    x: &[f32],
    y: &[u8],
    features: usize,
    hidden: &[usize],
    p: &TrainParams,
) -> Head {
    let mut rng = SplitMix(p.seed);
    let mut sizes = vec![features];
    sizes.extend_from_slice(hidden);
    sizes.push(CLASSES);
    let mut layers: Vec<Dense> = sizes
        .windows(2)
        .map(|io| {
            let mut l = Dense::zeros(io[0], io[1]);
            let a = (6.0 / io[0].max(1) as f32).sqrt();
            for (j, w) in l.weights.iter_mut().enumerate() {
                if j % (io[0] + 1) != io[0] {
                    *w = a * rng.symmetric();
                }
            }
            l
        })
        .collect();
    let mut velocity: Vec<Vec<f32>> = layers.iter().map(|l| vec![0.0; l.weights.len()]).collect();
    let mut grads: Vec<Vec<f32>> = velocity.clone();
    let mut order: Vec<usize> = (0..y.len()).collect();
    for epoch in 0..p.epochs {
        rng.shuffle(&mut order);
        let lr = (p.learning_rate / (1.0 + f64::from(epoch) * 0.3)) as f32;
        for batch in order.chunks(p.batch) {
            grads.iter_mut().for_each(|g| g.fill(0.0));
            for &i in batch {
                let xi = &x[i * features..(i + 1) * features];
                backprop(&layers, xi, usize::from(y[i]), &mut grads);
            }
            let scale = 1.0 / batch.len() as f32;
            let l2 = p.l2 as f32;
            for ((l, v), g) in layers.iter_mut().zip(&mut velocity).zip(&grads) {
                for ((wv, v), g) in l.weights.iter_mut().zip(v.iter_mut()).zip(g) {
                    *v = 0.9 * *v - lr * (g * scale + l2 * *wv);
                    *wv += *v;
                }
            }
        }
    }
    Head { layers }
}

/// Adds the gradient of one example's cross-entropy to `grads` (one per layer).
fn backprop(layers: &[Dense], x: &[f32], label: usize, grads: &mut [Vec<f32>]) {
    // Activations: the input, then each layer's output (ReLU'd except the last).
    let mut acts = vec![x.to_vec()];
    for (i, l) in layers.iter().enumerate() {
        let mut out = l.apply(&acts[i]);
        if i + 1 < layers.len() {
            out.iter_mut().for_each(|a| *a = a.max(0.0));
        }
        acts.push(out);
    }
    let scores = &acts[layers.len()];
    let m = scores.iter().copied().fold(f32::MIN, f32::max);
    let e: Vec<f32> = scores.iter().map(|v| (v - m).exp()).collect();
    let z: f32 = e.iter().sum();
    let mut delta: Vec<f32> = e
        .iter()
        .enumerate()
        .map(|(k, v)| v / z - f32::from(u8::from(k == label)))
        .collect();
    for (i, l) in layers.iter().enumerate().rev() {
        let input = &acts[i];
        let w = l.inputs + 1;
        let mut back = vec![0.0f32; l.inputs];
        for (k, &d) in delta.iter().enumerate() {
            if d == 0.0 {
                continue;
            }
            let g = &mut grads[i][k * w..(k + 1) * w];
            for (gj, xj) in g.iter_mut().zip(input) {
                *gj += d * xj;
            }
            g[l.inputs] += d;
            for (b, wj) in back.iter_mut().zip(&l.weights[k * w..k * w + l.inputs]) {
                *b += d * wj;
            }
        }
        // Through the ReLU of the layer below: no gradient where it was cut off.
        delta = back
            .iter()
            .zip(input)
            .map(|(b, a)| if *a > 0.0 { *b } else { 0.0 })
            .collect();
    }
}
