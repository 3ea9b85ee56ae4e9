package resident

// ReleaseChunkForTest is releaseChunk, for the package's external tests.
const ReleaseChunkForTest = releaseChunk
