# gpusched: build on Debian 12 with its packages, run on debian:bookworm-slim as a non-root user.
#   docker build -t gpusched:0.1.0 .
FROM debian:bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
      g++ cmake ninja-build pkg-config libboost1.81-dev rapidjson-dev libfmt-dev libyaml-cpp-dev libssl-dev libre2-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY include ./include
COPY src ./src
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUSCHED_BUILD_TESTS=OFF -DGPUSCHED_BUILD_BENCH=OFF \
    && cmake --build build --target gpusched \
    && strip build/gpusched

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
      libfmt9 libyaml-cpp0.7 libssl3 libre2-9 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/gpusched /usr/local/bin/gpusched
USER 65532:65532
EXPOSE 8888 8443
ENTRYPOINT ["/usr/local/bin/gpusched"]
CMD ["serve", "--in-cluster"]
