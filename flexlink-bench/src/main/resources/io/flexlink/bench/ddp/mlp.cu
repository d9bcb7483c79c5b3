// Kernels of the data-parallel training example (io.flexlink.bench.ddp.CudaMlpMath): a tiled fp32 GEMM and
// the element-wise steps of a ReLU multi-layer perceptron with a mean-squared-error loss. Compiled by NVRTC
// with its defaults (IEEE division, no fast math). Every kernel sums in a fixed order, so a run is
// deterministic: the same inputs give the same bits on every rank and every run.
//
// Row-major throughout. The GEMM sums each output element over k in ascending order whatever the tile
// position, so a row of C does not depend on how many rows the call has (a rank's shard of a batch gets
// the same forward results as the whole batch).

typedef unsigned long long fl_u64;

#define FL_GRID_STRIDE(i, n)                                                                 \
    for (fl_u64 i = (fl_u64)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                 \
         i += (fl_u64)gridDim.x * blockDim.x)

#define TILE_M 64
#define TILE_N 64
#define TILE_K 16

// C[M x N] = op(A) * op(B), with op(A)[m][k] = ta ? A[k * M + m] : A[m * K + k] and
// op(B)[k][n] = tb ? B[n * K + k] : B[k * N + n]. Blocks of 16 x 16 threads, each thread 4 x 4 outputs
// (rows ty + 16 i, columns tx + 16 j) of a 64 x 64 tile; grid (ceil(N / 64), ceil(M / 64)).
extern "C" __global__ void mlp_gemm(const float* A, const float* B, float* C, int M, int N, int K, int ta, int tb) {
    __shared__ float As[TILE_K][TILE_M + 1];  // +1: the strided stores of a transposed load hit distinct banks
    __shared__ float Bs[TILE_K][TILE_N + 1];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int tid = ty * 16 + tx;
    const int m0 = blockIdx.y * TILE_M;
    const int n0 = blockIdx.x * TILE_N;
    float acc[4][4];
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            acc[i][j] = 0.0f;
        }
    }
    for (int k0 = 0; k0 < K; k0 += TILE_K) {
        // 256 threads load a 16 x 64 tile of each operand, 4 elements each, reading along memory
        for (int l = 0; l < 4; l++) {
            const int idx = tid + 256 * l;
            int kk, mm, nn;
            if (ta) { mm = idx % TILE_M; kk = idx / TILE_M; } else { kk = idx % TILE_K; mm = idx / TILE_K; }
            int m = m0 + mm;
            int k = k0 + kk;
            As[kk][mm] = (m < M && k < K) ? (ta ? A[(size_t)k * M + m] : A[(size_t)m * K + k]) : 0.0f;
            if (tb) { kk = idx % TILE_K; nn = idx / TILE_K; } else { nn = idx % TILE_N; kk = idx / TILE_N; }
            int n = n0 + nn;
            k = k0 + kk;
            Bs[kk][nn] = (n < N && k < K) ? (tb ? B[(size_t)n * K + k] : B[(size_t)k * N + n]) : 0.0f;
        }
        __syncthreads();
        for (int kk = 0; kk < TILE_K; kk++) {
            float a[4];
            float b[4];
            for (int i = 0; i < 4; i++) {
                a[i] = As[kk][ty + 16 * i];
            }
            for (int j = 0; j < 4; j++) {
                b[j] = Bs[kk][tx + 16 * j];
            }
            for (int i = 0; i < 4; i++) {
                for (int j = 0; j < 4; j++) {
                    acc[i][j] += a[i] * b[j];  // past K the operands are 0: acc is unchanged
                }
            }
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++) {
        const int m = m0 + ty + 16 * i;
        for (int j = 0; j < 4; j++) {
            const int n = n0 + tx + 16 * j;
            if (m < M && n < N) {
                C[(size_t)m * N + n] = acc[i][j];
            }
        }
    }
}

// y[r][c] += bias[c]; z = relu(y) (or z = y). z may equal y.
extern "C" __global__ void mlp_bias_act(float* y, const float* bias, float* z, fl_u64 n, int cols, int relu) {
    FL_GRID_STRIDE(i, n) {
        const float v = y[i] + bias[i % (fl_u64)cols];
        y[i] = v;
        z[i] = relu ? fmaxf(v, 0.0f) : v;
    }
}

// dy = dz where the pre-activation y was positive, else 0. dy may equal dz.
extern "C" __global__ void mlp_relu_backward(const float* dz, const float* y, float* dy, fl_u64 n) {
    FL_GRID_STRIDE(i, n) {
        dy[i] = y[i] > 0.0f ? dz[i] : 0.0f;
    }
}

// dout = scale * (out - target): the gradient of the mean squared error (scale = 2 / elements).
extern "C" __global__ void mlp_mse_grad(const float* out, const float* target, float* dout, fl_u64 n, float scale) {
    FL_GRID_STRIDE(i, n) {
        dout[i] = scale * (out[i] - target[i]);
    }
}

// loss[0] = scale * sum((out - target)^2). One block of exactly 256 threads: strided partial sums, then a
// tree, always in the same order.
extern "C" __global__ void mlp_mse_loss(const float* out, const float* target, float* loss, fl_u64 n, float scale) {
    __shared__ float part[256];
    float s = 0.0f;
    for (fl_u64 i = threadIdx.x; i < n; i += 256) {
        const float d = out[i] - target[i];
        s += d * d;
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (threadIdx.x < w) {
            part[threadIdx.x] += part[threadIdx.x + w];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        loss[0] = scale * part[0];
    }
}

// db[c] = sum over rows of dy[r][c], rows in ascending order; one thread per column.
extern "C" __global__ void mlp_column_sums(const float* dy, float* db, int rows, int cols) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float s = 0.0f;
        for (int r = 0; r < rows; r++) {
            s += dy[(size_t)r * cols + c];
        }
        db[c] = s;
    }
}

// w -= lr * g
extern "C" __global__ void mlp_sgd(float* w, const float* g, fl_u64 n, float lr) {
    FL_GRID_STRIDE(i, n) {
        w[i] -= lr * g[i];
    }
}
