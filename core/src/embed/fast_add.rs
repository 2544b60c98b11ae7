//! A same-shape f32 `Add` for the optimized model, in place of tract's generic one.
//!
//! tract 0.23 turns an `Add` into its vectorized kernel only when it can prove the tensors
//! hold more than 32 elements. With the symbolic `batch` and `sequence` dims a sentence model
//! is typed with, it cannot, so every residual connection ran the generic path: one indirect
//! call per element, about 8% of a MiniLM batch (measured with `perf`). Concrete dims would
//! let tract choose its kernel, but they also change its matrix-product plan for the worse on
//! this CPU, and would need one plan per batch shape.

use tract_onnx::prelude::*;
use tract_onnx::tract_core::internal::*;
use tract_onnx::tract_core::ops::binary::TypedBinOp;
use tract_onnx::tract_core::ops::math::Add;

/// `a + b` for two f32 tensors of one shape, written into whichever input the plan no
/// longer needs.
#[derive(Debug, Clone, Default, Hash, PartialEq, Eq)]
pub(super) struct SameShapeAdd;

impl Op for SameShapeAdd {
    fn name(&self) -> StaticName {
        "SameShapeAdd".into()
    }

    op_as_typed_op!();
}

impl EvalOp for SameShapeAdd {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let (a, b) = args_2!(inputs);
        ensure!(
            a.shape() == b.shape(),
            "SameShapeAdd on {:?} and {:?}",
            a.shape(),
            b.shape()
        );
        // Addition commutes: write into an input nothing else holds, so nothing is copied.
        let (into, other) = match (a, b) {
            (a, b) if a.is_exclusive() => (a, b),
            (a, b) => (b, a),
        };
        let mut sum = into.into_tensor();
        {
            let mut dst = sum.try_as_plain_ram_mut()?;
            let src = other.try_as_plain_ram()?;
            for (x, y) in dst
                .as_slice_mut::<f32>()?
                .iter_mut()
                .zip(src.as_slice::<f32>()?)
            {
                *x += *y;
            }
        }
        Ok(tvec!(sum.into_tvalue()))
    }
}

impl TypedOp for SameShapeAdd {
    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        Ok(tvec!(inputs[0].without_value()))
    }

    as_op!();
}

/// Replaces every generic f32 `Add` of two same-shape tensors in an optimized model.
pub(super) fn replace_generic_adds(model: &mut TypedModel) -> TractResult<usize> {
    let mut targets = Vec::new();
    for node in model.nodes() {
        let Some(op) = node.op_as::<TypedBinOp>() else {
            continue;
        };
        if !op.0.is::<Add>() || op.1.is_some() {
            continue;
        }
        let facts = model.node_input_facts(node.id)?;
        if facts.len() == 2
            && facts.iter().all(|f| f.datum_type == f32::datum_type())
            && facts[0].shape == facts[1].shape
        {
            targets.push(node.id);
        }
    }
    for &id in &targets {
        let node = model.node(id);
        let patch = TypedModelPatch::replace_single_op(model, node, &node.inputs, SameShapeAdd)?;
        patch.apply(model)?;
    }
    Ok(targets.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tract_onnx::tract_core::ops::math::add;

    /// `x + y` and `x + x` over symbolic shapes, as tract optimizes them.
    fn model() -> TypedModel {
        let mut m = TypedModel::default();
        let n = m.sym("n");
        let fact = f32::fact([n.to_dim(), 3.to_dim()]);
        let x = m.add_source("x", fact.clone()).unwrap();
        let y = m.add_source("y", fact).unwrap();
        let sum = m.wire_node("sum", add(), &[x, y]);
        let twice = m.wire_node("twice", add(), &[x, x]);
        m.select_output_outlets(&[sum.unwrap()[0], twice.unwrap()[0]])
            .unwrap();
        m.into_optimized().unwrap()
    }

    #[test]
    fn generic_adds_are_replaced_and_still_add() {
        let mut m = model();
        assert_eq!(replace_generic_adds(&mut m).unwrap(), 2);
        let plan = m.into_runnable().unwrap();
        let x = tensor2(&[[1f32, 2., 3.], [4., 5., 6.]]);
        let y = tensor2(&[[10f32, 20., 30.], [40., 50., 60.]]);
        let out = plan.run(tvec![x.into_tvalue(), y.into_tvalue()]).unwrap();
        assert_eq!(*out[0], tensor2(&[[11f32, 22., 33.], [44., 55., 66.]]));
        // Both operands are the same shared value: the sum is written into a copy.
        assert_eq!(*out[1], tensor2(&[[2f32, 4., 6.], [8., 10., 12.]]));
    }
}
