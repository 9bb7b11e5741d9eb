// Tiny ONNX models for tests, written straight in ONNX's protobuf wire format: a model of a
// few operators needs a few dozen bytes, and no protobuf package. Field numbers are those of
// onnx/onnx.proto in github.com/onnx/onnx (ModelProto, GraphProto, NodeProto, AttributeProto,
// ValueInfoProto, TypeProto, TensorShapeProto, OperatorSetIdProto).

type Field = [number, 'varint', number] | [number, 'bytes', Uint8Array | string];

function varint(value: number): number[] {
  const out: number[] = [];
  let v = BigInt(value);
  if (v < 0n) v += 1n << 64n;
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}

function message(fields: Field[]): Uint8Array {
  const out: number[] = [];
  for (const [number, kind, value] of fields) {
    if (kind === 'varint') out.push(...varint((number << 3) | 0), ...varint(value));
    else {
      const bytes = typeof value === 'string' ? new TextEncoder().encode(value) : value;
      out.push(...varint((number << 3) | 2), ...varint(bytes.length), ...bytes);
    }
  }
  return Uint8Array.from(out);
}

const FLOAT = 1; // TensorProto.DataType.FLOAT

/** ValueInfoProto of a float tensor with a fixed shape. */
function floatTensor(name: string, dims: number[]): Uint8Array {
  const shape = message(dims.map((d) => [1, 'bytes', message([[1, 'varint', d]])] as Field));
  const tensorType = message([
    [1, 'varint', FLOAT],
    [2, 'bytes', shape],
  ]);
  return message([
    [1, 'bytes', name],
    [2, 'bytes', message([[1, 'bytes', tensorType]])],
  ]);
}

export interface TinyNode {
  op: string;
  inputs: string[];
  outputs: string[];
  /** Integer-list attributes (AttributeProto type INTS) and integer ones (INT). */
  ints?: Record<string, number[]>;
  int?: Record<string, number>;
}

/** A ModelProto (IR version 8, default opset 13) of `nodes` from float inputs to float outputs. */
export function tinyOnnxModel(spec: { inputs: Array<[string, number[]]>; outputs: Array<[string, number[]]>; nodes: TinyNode[] }): Uint8Array {
  const nodes = spec.nodes.map((node, i) => {
    const attributes: Field[] = [];
    for (const [name, values] of Object.entries(node.ints ?? {})) {
      attributes.push([5, 'bytes', message([[1, 'bytes', name], [20, 'varint', 7], ...values.map((v) => [8, 'varint', v] as Field)])]);
    }
    for (const [name, value] of Object.entries(node.int ?? {})) {
      attributes.push([5, 'bytes', message([[1, 'bytes', name], [20, 'varint', 2], [3, 'varint', value]])]);
    }
    return message([...node.inputs.map((n) => [1, 'bytes', n] as Field), ...node.outputs.map((n) => [2, 'bytes', n] as Field), [3, 'bytes', `node${i}`], [4, 'bytes', node.op], ...attributes]);
  });
  const graph = message([
    ...nodes.map((n) => [1, 'bytes', n] as Field),
    [2, 'bytes', 'tiny'],
    ...spec.inputs.map(([name, dims]) => [11, 'bytes', floatTensor(name, dims)] as Field),
    ...spec.outputs.map(([name, dims]) => [12, 'bytes', floatTensor(name, dims)] as Field),
  ]);
  return message([
    [1, 'varint', 8],
    [2, 'bytes', 'voxflow-tests'],
    [7, 'bytes', graph],
    [8, 'bytes', message([[1, 'bytes', ''], [2, 'varint', 13]])],
  ]);
}

/**
 * A stand-in for Smart Turn v3 with its real input and output: input_features [1, 80, 800] →
 * the mean over everything → sigmoid → [1, 1, 1]. Louder, fuller audio gives a higher probability.
 */
export function tinySmartTurnModel(): Uint8Array {
  return tinyOnnxModel({
    inputs: [['input_features', [1, 80, 800]]],
    outputs: [['probability', [1, 1, 1]]],
    nodes: [
      { op: 'ReduceMean', inputs: ['input_features'], outputs: ['mean'], ints: { axes: [1, 2] }, int: { keepdims: 1 } },
      { op: 'Sigmoid', inputs: ['mean'], outputs: ['probability'] },
    ],
  });
}
