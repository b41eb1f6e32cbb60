#!/bin/bash
# conv probe: legacy cuDNN (built against the wheel's cuDNN 9.19) vs torch, on ResNet-50 shapes at batch 256
cd "$(dirname "$0")"
bin=$(mktemp -d)/conv_probe  # the probe binary stays out of the checkout
CUDNN=$(python3 -c "import nvidia.cudnn,os;print(nvidia.cudnn.__path__[0])")
nvcc -O2 -std=c++17 -arch=sm_90 conv_probe.cu -I$CUDNN/include -L$CUDNN/lib -l:libcudnn.so.9 -Xlinker -rpath=$CUDNN/lib -o "$bin" || exit 1
# count N C H W K R stride pad
while read cnt C HH WW K R S P; do
  echo "== shape x$cnt C=$C H=$HH K=$K R=$R s=$S"
  "$bin" 256 $C $HH $WW $K $R $S $P
  python3 torch_probe.py 256 $C $HH $WW $K $R $S $P
done <<SHAPES
1 3 224 224 64 7 2 3
3 64 56 56 64 3 1 1
3 64 56 56 256 1 1 0
3 256 56 56 64 1 1 0
4 128 28 28 128 3 1 1
4 128 28 28 512 1 1 0
4 512 28 28 128 1 1 0
6 256 14 14 256 3 1 1
6 256 14 14 1024 1 1 0
6 1024 14 14 256 1 1 0
3 512 7 7 512 3 1 1
3 512 7 7 2048 1 1 0
3 2048 7 7 512 1 1 0
SHAPES
python3 torch_resnet_prof.py
