"""Single linkage: the dendrogram of an image's pixel graph cut into clusters, and of a point cloud's k-nearest-
neighbour graph handed to SciPy as a linkage matrix. Run: python single_linkage.py"""

import chseg
import numpy as np
from scipy.cluster import hierarchy
from scipy.spatial import cKDTree

rng = np.random.default_rng(3)
image = np.zeros((200, 300), np.uint8)
image[20:90, 30:120], image[110:180, 40:140], image[50:150, 180:280] = 80, 160, 240  # three flat squares
image += rng.integers(0, 4, image.shape).astype(np.uint8)  # and a little noise
dendrogram = chseg.single_linkage(image)
print("image: 4 clusters (background and three squares), sizes", np.bincount(dendrogram.clusters(4).ravel())[1:])

centres = rng.random((5, 3)) * 10
points = np.concatenate([c + rng.normal(0, 0.3, (1000, 3)) for c in centres])
distances, neighbours = cKDTree(points).query(points, k=16)
# The 15-nearest-neighbour graph, plus a chain through the points so that the graph is connected (a disconnected graph
# is a ValueError that says how many components it has).
chain = np.arange(len(points) - 1)
u = np.concatenate([np.repeat(np.arange(len(points)), 15), chain])
v = np.concatenate([neighbours[:, 1:].ravel(), chain + 1])
w = np.concatenate([distances[:, 1:].ravel(), np.linalg.norm(points[chain] - points[chain + 1], axis=1)])
graph = chseg.single_linkage_graph(u, v, w, len(points))
z = graph.linkage_matrix()
print("points: SciPy fcluster into 5 clusters:", np.bincount(hierarchy.fcluster(z, 5, "maxclust"))[1:])
