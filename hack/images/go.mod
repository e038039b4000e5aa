module tailor.local/images

go 1.22
